import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { InboundMessage, Logger, MessageSubscriber } from '../../application/index.js';
import { KafkaNames } from './kafka-names.js';
import { messagesOf } from './kafka-packs.js';

const RESTART_PAUSE_MS = 100;

/** KafkaJS's own rule for a crash worth a restart: retries ran out, or the root cause is retriable */
function isRetriable(error: Error): boolean {
  let cause: unknown = error;
  while (typeof cause === 'object' && cause !== null && 'cause' in cause && cause.cause) cause = cause.cause;
  return (
    error.name === 'KafkaJSNumberOfRetriesExceeded' || (cause as { retriable?: unknown }).retriable === true
  );
}

export type KafkaSubscriberOptions = Readonly<{
  /** partitions one consumer works on at once; one product always sits in one partition */
  partitionsConsumedConcurrently?: number;
  /** wait before a failed batch (say, MySQL down) is delivered again */
  retryDelayMs?: number;
  /** a member that stops heartbeating is dropped after this; a restarted worker rejoins its group within it */
  sessionTimeoutMs?: number;
  /** how long a fetch waits at the broker for `minBytes`; also bounds how long a disconnect waits */
  maxWaitTimeMs?: number;
  /**
   * a fetch is answered once this much has arrived (or after `maxWaitTimeMs`): more than 1 byte trades a
   * little latency for fewer, larger fetches and batches
   */
  minBytes?: number;
  /** bounds a batch: larger batches merge more decrements, smaller ones redo less after a crash */
  maxBytesPerPartition?: number;
  names?: KafkaNames;
}>;

/**
 * Consumer groups on KafkaJS with manual offsets: a batch's offset is committed only after the handler
 * resolved, i.e. after the MySQL transaction committed. A batch whose handler throws is not committed: its
 * partition pauses, seeks back to the batch's first offset and resumes after a delay, so nothing is lost or
 * skipped while, say, MySQL is down.
 */
export class KafkaMessageSubscriber implements MessageSubscriber {
  private readonly consumers: Consumer[] = [];
  /** restarts after a crash, each settled once its consumer runs again or crashed again */
  private readonly restarts = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly logger: Logger,
    private readonly options: KafkaSubscriberOptions = {},
  ) {}

  async subscribe(
    spec: Readonly<{ topic: string; groupId: string; onAssigned?: (() => void) | undefined }>,
    handler: (messages: readonly InboundMessage[]) => Promise<void>,
  ): Promise<void> {
    const names = this.options.names ?? new KafkaNames();
    const groupId = names.group(spec.groupId);
    const topic = names.topic(spec.topic);
    const consumer = this.kafka.consumer({
      groupId,
      allowAutoTopicCreation: true,
      sessionTimeout: this.options.sessionTimeoutMs ?? 30_000,
      // a rebalance waits for the members that are alive, not for a minute
      rebalanceTimeout: this.options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: Math.max(500, Math.floor((this.options.sessionTimeoutMs ?? 30_000) / 10)),
      maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 1_000,
      minBytes: this.options.minBytes ?? 1,
      maxBytesPerPartition: this.options.maxBytesPerPartition ?? 1_048_576,
      // the subscriber restarts a crashed consumer itself (see restartAfter): KafkaJS's own restart, timed
      // out of its reach, could still be joining the group after stop() returned
      retry: {
        retries: 10,
        initialRetryTime: 100,
        maxRetryTime: 2_000,
        restartOnFailure: () => Promise.resolve(false),
      },
    });
    this.consumers.push(consumer);
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      const { memberId, memberAssignment } = payload;
      this.logger.info(
        { groupId, memberId, assignment: memberAssignment, pid: process.pid },
        'joined consumer group',
      );
      spec.onAssigned?.();
    });
    const run = (): Promise<void> =>
      consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 2,
        eachBatch: (payload) => this.handleBatch(consumer, { groupId, topic: spec.topic }, payload, handler),
      });
    consumer.on(consumer.events.CRASH, ({ payload }) => this.restartAfter(payload.error, groupId, run));
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // a restart under way ends (running or crashed) before its consumer is disconnected, so nothing of it
    // outlives stop()
    while (this.restarts.size > 0) await Promise.all([...this.restarts]);
    const consumers = this.consumers.splice(0);
    await Promise.all(consumers.map((c) => c.disconnect()));
  }

  /** a crashed consumer (KafkaJS has stopped it) runs again after a pause when its error is retriable */
  private restartAfter(error: Error, groupId: string, run: () => Promise<void>): void {
    if (this.stopping) return;
    if (!isRetriable(error)) {
      this.logger.error({ groupId, err: String(error) }, 'the consumer crashed and is not restarted');
      return;
    }
    const pause = (error as { retryTime?: number }).retryTime ?? RESTART_PAUSE_MS;
    this.logger.warn({ groupId, err: String(error), pauseMs: pause }, 'the consumer crashed; restarting it');
    const restart: Promise<void> = new Promise<void>((resolve) => setTimeout(resolve, pause))
      .then(() => (this.stopping ? undefined : run()))
      .catch((err: unknown) =>
        this.logger.error({ groupId, err: String(err) }, 'restarting the consumer failed'),
      )
      .finally(() => this.restarts.delete(restart));
    this.restarts.add(restart);
  }

  private async handleBatch(
    consumer: Consumer,
    /** the group on the broker, and the topic by the service's name (the batch has the broker's) */
    { groupId, topic: name }: Readonly<{ groupId: string; topic: string }>,
    payload: EachBatchPayload,
    handler: (messages: readonly InboundMessage[]) => Promise<void>,
  ): Promise<void> {
    const { batch } = payload;
    if (batch.messages.length === 0 || payload.isStale() || !payload.isRunning()) return;
    const { topic, partition } = batch;
    const messages: InboundMessage[] = [];
    for (const record of batch.messages) {
      const read = messagesOf(name, partition, record);
      if (Array.isArray(read)) messages.push(...read);
      // nothing can ever read it: kept on the topic, passed over rather than blocking the partition
      else
        this.logger.error(
          { groupId, topic, partition, offset: record.offset, err: read.unreadable },
          'a record that is not a pack of messages was skipped',
        );
    }
    try {
      if (messages.length > 0) await handler(messages);
    } catch (error) {
      this.logger.warn(
        { groupId, topic, partition, offset: batch.firstOffset(), err: String(error) },
        'batch failed; it is delivered again after a pause',
      );
      consumer.seek({ topic, partition, offset: batch.firstOffset() ?? batch.messages[0]!.offset });
      const resume = payload.pause();
      setTimeout(resume, this.options.retryDelayMs ?? 1_000).unref();
      return;
    }
    const last = batch.lastOffset();
    payload.resolveOffset(last);
    await payload.commitOffsetsIfNecessary({
      topics: [{ topic, partitions: [{ partition, offset: (BigInt(last) + 1n).toString() }] }],
    });
    await payload.heartbeat();
    this.logger.info(
      { groupId, topic, partition, messages: messages.length, pid: process.pid },
      'batch handled',
    );
  }
}
