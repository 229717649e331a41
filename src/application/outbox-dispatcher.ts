import type { Clock, Logger, MessagePublisher, Metrics, NewOutboxMessage, Outbox } from './ports/index.js';

/**
 * Publishes committed outbox rows right after the transaction, without making the caller wait for the
 * broker. A row that fails stays PENDING for the relay job: nothing accepted is lost.
 */
export class OutboxDispatcher {
  private inFlight = new Set<Promise<void>>();

  constructor(
    private readonly outbox: Outbox,
    private readonly publisher: MessagePublisher,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  dispatchSoon(messages: readonly NewOutboxMessage[]): void {
    for (const message of messages) {
      const sending = this.send(message).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  get busy(): boolean {
    return this.inFlight.size > 0;
  }

  /** Resolves when every publish started so far has settled (for shutdown). */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async send(message: NewOutboxMessage): Promise<void> {
    try {
      await this.publisher.publish(message);
      this.metrics.count('outbox_published', { topic: message.topic });
    } catch (error) {
      this.metrics.count('outbox_publish_failures', { topic: message.topic });
      this.logger.warn(
        { messageId: message.messageId, err: String(error) },
        'publish failed; the relay will retry',
      );
      return;
    }
    try {
      await this.outbox.markSent(message.messageId, this.clock.now());
    } catch (error) {
      // The message is out; at worst the relay sends it again and the idempotent consumer skips it.
      this.logger.warn(
        { messageId: message.messageId, err: String(error) },
        'could not mark outbox row sent',
      );
    }
  }
}
