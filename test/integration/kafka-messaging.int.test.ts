import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Kafka } from 'kafkajs';
import type { InboundMessage, MessageSubscriber } from '../../src/application/index.js';
import { createKafka } from '../../src/adapters/kafka/kafka-connection.js';
import { KafkaMessagePublisher } from '../../src/adapters/kafka/kafka-message-publisher.js';
import { KafkaMessageSubscriber } from '../../src/adapters/kafka/kafka-message-subscriber.js';
import { PACK_HEADER } from '../../src/adapters/kafka/kafka-packs.js';
import { messagingContract } from '../contract/messaging.contract.js';
import { silentLogger } from '../support/contract-helpers.js';
import { groupsCaughtUp, startTestBroker, type TestBroker } from '../support/kafka.js';

const run = promisify(execFile);

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = createKafka({ brokers: broker.brokers.split(',') }, silentLogger);
}, 30_000);

afterAll(async () => {
  await broker.stop();
});

messagingContract(
  `Kafka (KafkaJS on ${process.env['SECKILL_TEST_KAFKA'] === 'mock' ? "librdkafka's mock cluster" : 'Apache Kafka'})`,
  () => {
    const publisher = new KafkaMessagePublisher(kafka, {
      names: broker.names,
      idempotent: broker.cluster !== null,
    });
    const inner = new KafkaMessageSubscriber(kafka, silentLogger, {
      retryDelayMs: 100,
      sessionTimeoutMs: 6_000,
      maxWaitTimeMs: 200,
      names: broker.names,
    });
    const subscriptions: Array<{ groupId: string; topic: string }> = [];
    const subscriber: MessageSubscriber = {
      subscribe: async (spec, handler) => {
        subscriptions.push({ ...spec });
        await inner.subscribe(spec, handler);
      },
      stop: async () => {
        subscriptions.length = 0;
        await inner.stop();
      },
    };
    return Promise.resolve({
      publisher,
      subscriber,
      drained: () => groupsCaughtUp(kafka, subscriptions, broker.names),
      createTopic: (topic: string) => broker.createTopics(topic),
    });
  },
  async (fixture) => {
    await fixture.subscriber.stop();
    await (fixture.publisher as KafkaMessagePublisher).disconnect();
  },
);

describe('packs: the messages of one product published together travel as one record', () => {
  const newTopic = async () => {
    const topic = `packs-${randomUUID()}`;
    await broker.createTopics(topic);
    return topic;
  };

  /** Every record on a topic as the broker keeps it, read by a raw KafkaJS consumer from the start. */
  const recordsOn = async (topic: string, expected: number) => {
    const consumer = kafka.consumer({
      groupId: `raw-${randomUUID()}`,
      sessionTimeout: 6_000,
      maxWaitTimeInMs: 200,
    });
    const records: Array<{ key: string; headers: string[] }> = [];
    await consumer.connect();
    await consumer.subscribe({ topic: broker.names.topic(topic), fromBeginning: true });
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          records.push({ key: message.key?.toString() ?? '', headers: Object.keys(message.headers ?? {}) });
          if (records.length >= expected) resolve();
          return Promise.resolve();
        },
      });
    });
    try {
      await done;
    } finally {
      await consumer.disconnect();
    }
    return records;
  };

  it('sends one record per product for a batch, and every message comes out with its own headers, in order', async () => {
    const topic = await newTopic();
    const publisher = new KafkaMessagePublisher(kafka, {
      names: broker.names,
      idempotent: broker.cluster !== null,
    });
    const subscriber = new KafkaMessageSubscriber(kafka, silentLogger, {
      sessionTimeoutMs: 6_000,
      maxWaitTimeMs: 200,
      names: broker.names,
    });
    const sent = Array.from({ length: 60 }, (_, i) => ({
      topic,
      key: `product-${i % 2}`,
      payload: `{"n":${i},"text":"quotes \\" and \\\\ survive"}`,
      headers: { 'correlation-id': `c-${i}`, 'order-id': `o-${i}` },
    }));
    const lone = { topic, key: 'product-9', payload: 'alone', headers: { 'correlation-id': 'c-lone' } };
    const received: InboundMessage[] = [];
    const groupId = `group-${randomUUID()}`;
    try {
      await subscriber.subscribe({ topic, groupId }, (messages) => {
        received.push(...messages);
        return Promise.resolve();
      });
      await publisher.publishMany([...sent, lone]);
      await groupsCaughtUp(kafka, [{ topic, groupId }], broker.names);

      // two packs (one per product) and the lone message as a plain record
      const records = await recordsOn(topic, 3);
      expect(records.map((r) => [r.key, r.headers]).sort()).toEqual([
        ['product-0', [PACK_HEADER]],
        ['product-1', [PACK_HEADER]],
        ['product-9', ['correlation-id']],
      ]);
      for (const key of ['product-0', 'product-1'])
        expect(received.filter((m) => m.key === key).map((m) => [m.payload, m.headers])).toEqual(
          sent.filter((m) => m.key === key).map((m) => [m.payload, m.headers]),
        );
      expect(received.find((m) => m.key === 'product-9')).toMatchObject({
        payload: 'alone',
        headers: lone.headers,
      });
    } finally {
      await subscriber.stop();
      await publisher.disconnect();
    }
  });
});

/**
 * In a process of its own (the compiled service), each Kafka client the service keeps is closed while it is
 * still connecting, as a short command does (`seckill audit`): the process must end once they are closed.
 */
const CLOSED_WHILE_CONNECTING = `
const [brokers, idempotent] = process.argv.slice(1);
const { createKafka } = await import('./dist/src/adapters/kafka/kafka-connection.js');
const { KafkaMessagePublisher } = await import('./dist/src/adapters/kafka/kafka-message-publisher.js');
const { KafkaHealthCheck } = await import('./dist/src/adapters/kafka/kafka-health-check.js');
const { KafkaConsumerLag } = await import('./dist/src/adapters/kafka/kafka-consumer-lag.js');
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const kafka = createKafka({ brokers: brokers.split(',') }, quiet);
const publisher = new KafkaMessagePublisher(kafka, { idempotent: idempotent === 'true' });
const health = new KafkaHealthCheck(kafka);
const lag = new KafkaConsumerLag(kafka);
publisher.connect().catch(() => undefined);
health.check().catch(() => undefined);
lag.lag().catch(() => undefined);
await Promise.all([publisher.disconnect(), health.close(), lag.close()]);
console.log('closed');
`;

describe('closing', () => {
  it('a client closed while it is still connecting leaves nothing open: its process ends', async () => {
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        run(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            CLOSED_WHILE_CONNECTING,
            broker.brokers,
            String(broker.cluster !== null),
          ],
          { cwd: process.cwd(), timeout: 30_000 },
        ).catch((error: Error & { killed?: boolean; stdout?: string }) => ({
          stdout: error.killed ? `still running after 30 s (printed: ${error.stdout ?? ''})` : error.message,
        })),
      ),
    );
    expect(answers.map((a) => a.stdout.trim())).toEqual(['closed', 'closed', 'closed']);
  }, 60_000);
});
