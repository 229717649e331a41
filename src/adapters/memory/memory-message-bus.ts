import type {
  InboundMessage,
  Logger,
  MessagePublisher,
  MessageSubscriber,
  OutboundMessage,
} from '../../application/index.js';

type Group = {
  topic: string;
  offset: number;
  handler: (messages: readonly InboundMessage[]) => Promise<void>;
  running: boolean;
  retryTimer: NodeJS.Timeout | null;
  failures: number;
};

/**
 * The broker of the memory profile: a log per topic and an offset per consumer group. Delivery is always
 * asynchronous (never inside the publisher's call), at least once, and a batch that fails is delivered again.
 */
export class MemoryMessageBus implements MessagePublisher, MessageSubscriber {
  private readonly logs = new Map<string, InboundMessage[]>();
  private readonly groups = new Map<string, Group>();
  private idleWaiters: Array<() => void> = [];
  private stopped = false;

  constructor(
    private readonly logger: Logger,
    private readonly options: Readonly<{ batchSize: number; retryDelayMs: number }> = {
      batchSize: 200,
      retryDelayMs: 50,
    },
  ) {}

  publish(message: OutboundMessage): Promise<void> {
    const log = this.logs.get(message.topic) ?? [];
    this.logs.set(message.topic, log);
    log.push({ ...message, headers: { ...message.headers }, partition: 0, offset: String(log.length) });
    for (const group of this.groups.values()) if (group.topic === message.topic) this.schedule(group);
    return Promise.resolve();
  }

  subscribe(
    spec: Readonly<{ topic: string; groupId: string }>,
    handler: (messages: readonly InboundMessage[]) => Promise<void>,
  ): Promise<void> {
    const key = `${spec.groupId}\u0000${spec.topic}`;
    const existing = this.groups.get(key);
    const group: Group = {
      topic: spec.topic,
      offset: existing?.offset ?? 0,
      handler,
      running: false,
      retryTimer: null,
      failures: 0,
    };
    this.groups.set(key, group);
    this.stopped = false;
    this.schedule(group);
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const group of this.groups.values()) if (group.retryTimer) clearTimeout(group.retryTimer);
    while ([...this.groups.values()].some((g) => g.running))
      await new Promise((resolve) => setImmediate(resolve));
    this.notifyIdle();
  }

  /** Resolves once every group has handled every message published so far (and what those produced). */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Messages of a topic, in order: what a fresh consumer group would read from the beginning. */
  messages(topic: string): readonly InboundMessage[] {
    return this.logs.get(topic) ?? [];
  }

  private isIdle(): boolean {
    if (this.stopped) return true;
    return [...this.groups.values()].every(
      (g) => !g.running && g.offset >= (this.logs.get(g.topic)?.length ?? 0),
    );
  }

  private schedule(group: Group): void {
    if (group.running || group.retryTimer || this.stopped) return;
    group.running = true;
    setImmediate(() => void this.drain(group));
  }

  private async drain(group: Group): Promise<void> {
    const log = this.logs.get(group.topic) ?? [];
    while (!this.stopped && group.offset < log.length) {
      const batch = log.slice(group.offset, group.offset + this.options.batchSize);
      try {
        await group.handler(batch);
        group.offset += batch.length;
        group.failures = 0;
      } catch (error) {
        group.failures += 1;
        this.logger.warn(
          { topic: group.topic, offset: group.offset, err: String(error) },
          'batch failed; redelivering',
        );
        const delay = Math.min(this.options.retryDelayMs * 2 ** Math.min(group.failures - 1, 6), 5_000);
        group.running = false;
        group.retryTimer = setTimeout(() => {
          group.retryTimer = null;
          this.schedule(group);
        }, delay);
        return;
      }
    }
    group.running = false;
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
