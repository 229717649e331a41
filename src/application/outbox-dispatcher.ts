import type { Clock, Logger, MessagePublisher, Metrics, NewOutboxMessage, Outbox } from './ports/index.js';

export type DispatcherOptions = Readonly<{
  /** at most this many messages per producer request */
  maxBatch: number;
  /** producer requests under way at once; what arrives meanwhile waits and goes out together */
  maxInFlight: number;
  /**
   * how long the first message of a batch waits for others (Kafka's linger.ms): nobody waits for the
   * publish, and bigger record batches let the commit consumer merge more per fetch
   */
  lingerMs: number;
}>;

const DEFAULTS: DispatcherOptions = { maxBatch: 1_000, maxInFlight: 1, lingerMs: 5 };

/**
 * Publishes committed outbox rows right after their transaction, without making anyone wait for the
 * broker. What is handed over within `lingerMs`, or while an earlier request is under way, goes out
 * together: one producer request for the batch (one record batch per partition, which the commit consumer
 * then fetches and merges as one), and one UPDATE … IN (…) marking its rows sent. A batch that fails stays
 * PENDING for the relay job: nothing accepted is lost.
 */
export class OutboxDispatcher {
  private queue: NewOutboxMessage[] = [];
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  private idle: Array<() => void> = [];
  private readonly options: DispatcherOptions;

  constructor(
    private readonly outbox: Outbox,
    private readonly publisher: MessagePublisher,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    options: Partial<DispatcherOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  dispatchSoon(messages: readonly NewOutboxMessage[]): void {
    if (messages.length === 0) return;
    for (const message of messages) this.queue.push(message);
    if (this.scheduled) return;
    this.scheduled = true;
    const go = () => {
      this.scheduled = false;
      this.pump();
    };
    if (this.options.lingerMs > 0) setTimeout(go, this.options.lingerMs);
    else setImmediate(go);
  }

  get busy(): boolean {
    return this.scheduled || this.queue.length > 0 || this.inFlight.size > 0;
  }

  /** Resolves when every message handed over so far has been published or given up to the relay (for shutdown). */
  settle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.inFlight.size < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      const sending = this.send(batch).finally(() => {
        this.inFlight.delete(sending);
        this.pump();
      });
      this.inFlight.add(sending);
    }
    if (!this.busy) for (const resolve of this.idle.splice(0)) resolve();
  }

  private async send(batch: readonly NewOutboxMessage[]): Promise<void> {
    try {
      await this.publisher.publishMany(batch);
    } catch (error) {
      for (const [topic, n] of countByTopic(batch))
        this.metrics.count('outbox_publish_failures', { topic }, n);
      this.logger.warn(
        { messages: batch.length, first: batch[0]?.messageId, err: String(error) },
        'publish failed; the relay will retry',
      );
      return;
    }
    for (const [topic, n] of countByTopic(batch)) this.metrics.count('outbox_published', { topic }, n);
    try {
      await this.outbox.markSentMany(
        batch.map((m) => m.messageId),
        this.clock.now(),
      );
    } catch (error) {
      // The messages are out; at worst the relay sends them again and the idempotent consumers skip them.
      this.logger.warn(
        { messages: batch.length, first: batch[0]?.messageId, err: String(error) },
        'could not mark outbox rows sent',
      );
    }
  }
}

const countByTopic = (batch: readonly NewOutboxMessage[]): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const m of batch) counts.set(m.topic, (counts.get(m.topic) ?? 0) + 1);
  return counts;
};
