import { describe, expect, it } from '@jest/globals';
import type { Kafka } from 'kafkajs';
import { KafkaMessageSubscriber } from '../../../src/adapters/kafka/kafka-message-subscriber.js';
import { silentLogger } from '../../support/contract-helpers.js';

type Listener = (event: { payload: Record<string, unknown> }) => void;

/** A KafkaJS consumer's surface as the subscriber uses it, each call written down in order. */
class ConsumerDouble {
  readonly events = { GROUP_JOIN: 'group_join', CRASH: 'crash' };
  readonly calls: string[] = [];
  readonly runs: Array<{ finish: () => void }> = [];
  private readonly listeners = new Map<string, Listener[]>();
  private runStarted: (() => void) | null = null;

  on(event: string, listener: Listener): void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
  }
  crash(error: Error): void {
    for (const listener of this.listeners.get(this.events.CRASH) ?? []) listener({ payload: { error } });
  }
  /** resolves when run() is called for the n-th time (from 1) */
  nthRun(n: number): Promise<void> {
    if (this.runs.length >= n) return Promise.resolve();
    return new Promise((resolve) => (this.runStarted = resolve));
  }
  connect(): Promise<void> {
    this.calls.push('connect');
    return Promise.resolve();
  }
  subscribe(): Promise<void> {
    return Promise.resolve();
  }
  run(): Promise<void> {
    this.calls.push('run');
    let finish = (): void => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.runs.push({ finish });
    this.runStarted?.();
    // the first run ends at once; a restart stays under way (joining the group) until the test finishes it
    if (this.runs.length === 1) finish();
    return done.then(() => void this.calls.push('run ended'));
  }
  disconnect(): Promise<void> {
    this.calls.push('disconnect');
    return Promise.resolve();
  }
}

const retriable = (): Error =>
  Object.assign(new Error('retries ran out'), { name: 'KafkaJSNumberOfRetriesExceeded', retryTime: 1 });

const subscriberOn = async (consumer: ConsumerDouble): Promise<KafkaMessageSubscriber> => {
  const kafka = { consumer: () => consumer } as unknown as Kafka;
  const subscriber = new KafkaMessageSubscriber(kafka, silentLogger);
  await subscriber.subscribe({ topic: 'orders.reserved', groupId: 'commit' }, () => Promise.resolve());
  return subscriber;
};

describe('the Kafka subscriber after its consumer crashed', () => {
  it('runs the consumer again when the crash is retriable', async () => {
    const consumer = new ConsumerDouble();
    const subscriber = await subscriberOn(consumer);
    consumer.crash(retriable());
    await consumer.nthRun(2);
    consumer.runs[1]!.finish();
    await subscriber.stop();
    expect(consumer.calls).toEqual(['connect', 'run', 'run ended', 'run', 'run ended', 'disconnect']);
  });

  it('leaves a consumer that crashed for good stopped', async () => {
    const consumer = new ConsumerDouble();
    const subscriber = await subscriberOn(consumer);
    consumer.crash(new Error('not authorized'));
    await subscriber.stop();
    expect(consumer.calls).toEqual(['connect', 'run', 'run ended', 'disconnect']);
  });

  it('disconnects only after a restart under way has ended, and restarts nothing once stopping', async () => {
    const consumer = new ConsumerDouble();
    const subscriber = await subscriberOn(consumer);
    consumer.crash(retriable());
    await consumer.nthRun(2);

    let stopped = false;
    const stopping = subscriber.stop().then(() => (stopped = true));
    // the restart is still joining: stop() waits for it rather than leave it running after the disconnect
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    expect(consumer.calls).not.toContain('disconnect');

    consumer.crash(retriable()); // a crash while stopping starts no restart
    consumer.runs[1]!.finish();
    await stopping;
    expect(consumer.calls).toEqual(['connect', 'run', 'run ended', 'run', 'run ended', 'disconnect']);
  });
});
