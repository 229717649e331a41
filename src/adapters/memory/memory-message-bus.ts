import {
  type ConsumerLag,
  type GroupLag,
  type InboundMessage,
  type Logger,
  type MessagePublisher,
  type MessageSubscriber,
  type OutboundMessage,
  WATCHED_GROUPS,
} from '../../application/index.js';

type Group = {
  key: string;
  groupId: string;
  topic: string;
  offset: number;
  handler: (messages: readonly InboundMessage[]) => Promise<void>;
  running: boolean;
  retryTimer: NodeJS.Timeout | null;
  failures: number;
  stopped: boolean;
};

const groupKey = (groupId: string, topic: string): string => `${groupId}\u0000${topic}`;

/**
 * The broker of the memory profile: a log per topic and an offset per consumer group. Delivery is always
 * asynchronous (never inside the publisher's call), at least once, and a batch that fails is delivered again.
 */
export class MemoryMessageBus implements MessagePublisher, MessageSubscriber, ConsumerLag {
  private readonly logs = new Map<string, InboundMessage[]>();
  private readonly groups = new Map<string, Group>();
  /** committed offsets, kept across stop and subscribe as a broker keeps them */
  private readonly offsets = new Map<string, number>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly logger: Logger,
    private readonly options: Readonly<{ batchSize: number; retryDelayMs: number }> = {
      batchSize: 200,
      retryDelayMs: 50,
    },
  ) {}

  publish(message: OutboundMessage): Promise<void> {
    return this.publishMany([message]);
  }

  publishMany(messages: readonly OutboundMessage[]): Promise<void> {
    const topics = new Set<string>();
    for (const message of messages) {
      const log = this.logs.get(message.topic) ?? [];
      this.logs.set(message.topic, log);
      log.push({ ...message, headers: { ...message.headers }, partition: 0, offset: String(log.length) });
      topics.add(message.topic);
    }
    for (const group of this.groups.values()) if (topics.has(group.topic)) this.schedule(group);
    return Promise.resolve();
  }

  subscribe(
    spec: Readonly<{ topic: string; groupId: string }>,
    handler: (messages: readonly InboundMessage[]) => Promise<void>,
  ): Promise<void> {
    const key = groupKey(spec.groupId, spec.topic);
    const previous = this.groups.get(key);
    if (previous) previous.stopped = true;
    const group: Group = {
      key,
      groupId: spec.groupId,
      topic: spec.topic,
      offset: this.offsets.get(key) ?? 0,
      handler,
      running: false,
      retryTimer: null,
      failures: 0,
      stopped: false,
    };
    this.groups.set(key, group);
    this.schedule(group);
    return Promise.resolve();
  }

  /** Ends every subscription made so far; a later subscribe resumes its own group from its committed offset. */
  async stop(): Promise<void> {
    const stopping = [...this.groups.values()];
    this.groups.clear();
    for (const group of stopping) {
      group.stopped = true;
      if (group.retryTimer) clearTimeout(group.retryTimer);
    }
    while (stopping.some((g) => g.running)) await new Promise((resolve) => setImmediate(resolve));
    this.notifyIdle();
  }

  /** Resolves once every group has handled every message published so far (and what those produced). */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Per watched group, the messages of its topic past its committed offset, subscribed now or not. */
  lag(): Promise<GroupLag[]> {
    return Promise.resolve(
      WATCHED_GROUPS.map(({ groupId, topic }) => ({
        groupId,
        topic,
        lag: Math.max(
          0,
          (this.logs.get(topic)?.length ?? 0) - (this.offsets.get(groupKey(groupId, topic)) ?? 0),
        ),
      })),
    );
  }

  /** Messages of a topic, in order: what a fresh consumer group would read from the beginning. */
  messages(topic: string): readonly InboundMessage[] {
    return this.logs.get(topic) ?? [];
  }

  private isIdle(): boolean {
    return [...this.groups.values()].every(
      (g) => !g.running && g.offset >= (this.logs.get(g.topic)?.length ?? 0),
    );
  }

  private schedule(group: Group): void {
    if (group.running || group.retryTimer || group.stopped) return;
    group.running = true;
    setImmediate(() => void this.drain(group));
  }

  private async drain(group: Group): Promise<void> {
    const log = this.logs.get(group.topic) ?? [];
    while (!group.stopped && group.offset < log.length) {
      const batch = log.slice(group.offset, group.offset + this.options.batchSize);
      try {
        await group.handler(batch);
        group.offset += batch.length;
        this.offsets.set(group.key, group.offset);
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
