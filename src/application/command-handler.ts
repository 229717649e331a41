import type { Decider, DomainEvent } from '../domain/index.js';
import { defaultUpcaster, type EventUpcaster } from './event-schema.js';
import { messagesOf } from './messages.js';
import type { OutboxDispatcher } from './outbox-dispatcher.js';
import {
  type Clock,
  type EventEnvelope,
  type EventStore,
  type IdGenerator,
  type NewOutboxMessage,
  type StoredEvent,
  type StreamAppend,
  type TransactionalStores,
  type UnitOfWork,
  VersionConflict,
} from './ports/index.js';

/** What an envelope says of the events a command makes, beside their id and schema version. */
export type EventContext = Readonly<{
  occurredAt: string;
  correlationId: string;
  causationId: string | null;
  userId?: string;
  /** the sampled trace the decision is made in (see Tracer): its events, and their messages, carry it on */
  traceparent?: string;
}>;

/**
 * One command to handle. `isNew`: it starts a stream (a fresh id), so nothing is read and nothing may exist.
 * The context may depend on the stream's history (a timeout carries on its order's correlation).
 */
export type CommandItem<C> = Readonly<{
  command: C;
  context: EventContext | ((history: readonly StoredEvent[]) => EventContext);
  isNew?: boolean;
}>;

/** A stream as read: its state, its version and its events. */
export type Loaded<S> = Readonly<{ state: S; version: number; history: readonly StoredEvent[] }>;

/** A handled command: the state before and after, and what was appended (nothing, when it already took effect). */
export type Decision<C, E extends DomainEvent, S> = Readonly<{
  command: C;
  streamId: string;
  before: S;
  state: S;
  /** the stream's version before the append */
  version: number;
  envelopes: readonly EventEnvelope<E>[];
}>;

/** How a write that lost a race for a stream is run again: `attempts` in all, each after a jittered wait. */
export type RetryPolicy = Readonly<{ attempts: number; baseDelayMs: number; maxDelayMs: number }>;

/** A version conflict is a race with another writer of the same stream: a few quick tries settle it. */
export const CONFLICT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 2, maxDelayMs: 50 };

/**
 * "Full jitter": a random wait up to the attempt's exponential ceiling, so that writers who collided once do
 * not collide again in step.
 */
export const retryDelayMs = (
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number => Math.floor(random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)));

/** A read model kept in step with the decisions inside the transaction that appends them. */
export type InlineProjection<C, E extends DomainEvent, S> = (
  stores: TransactionalStores,
  decisions: readonly Decision<C, E, S>[],
) => Promise<void>;

/** What every write of a handler shares, given once: where it runs, what it keeps in step, where its messages go. */
export type WritePath<C, E extends DomainEvent, S> = Readonly<{
  unitOfWork: UnitOfWork;
  ids: IdGenerator;
  clock: Clock;
  /** hands the outbox rows of a committed write to the broker */
  dispatcher: Pick<OutboxDispatcher, 'dispatchSoon'>;
  projections: readonly InlineProjection<C, E, S>[];
  upcaster?: EventUpcaster;
}>;

/**
 * One transaction's writes as a use case makes them: it reads and decides through this, and names the writes
 * of its own (the inventory, marks on the outbox) that go with the handler's.
 */
export class WriteTransaction<C, E extends DomainEvent, S> {
  /** what was decided in this transaction, appended when the use case is done */
  readonly decisions: Array<Decision<C, E, S>> = [];
  /** @internal the use case's own writes, sent with the handler's */
  readonly alongside: Array<() => Promise<unknown>> = [];

  constructor(
    readonly stores: TransactionalStores,
    private readonly handler: CommandHandler<C, E, S>,
  ) {}

  /** Reads the streams the commands name (none for a new one) and decides each. */
  async decide(items: readonly CommandItem<C>[]): Promise<Array<Decision<C, E, S>>> {
    const loaded = await this.load(
      items.filter((i) => !i.isNew).map((i) => this.handler.streamOf(i.command)),
    );
    return items.map((item) =>
      this.decideOn(item, item.isNew ? undefined : loaded.get(this.handler.streamOf(item.command))),
    );
  }

  async decideOne(item: CommandItem<C>): Promise<Decision<C, E, S>> {
    const [decision] = await this.decide([item]);
    return decision!;
  }

  /** Reads streams and folds each into its state (for a use case that picks its commands by state). */
  load(streamIds: readonly string[]): Promise<Map<string, Loaded<S>>> {
    return this.handler.load(this.stores.events, streamIds);
  }

  /** Decides one command on a stream this transaction loaded (undefined: a new stream). */
  decideOn(item: CommandItem<C>, loaded: Loaded<S> | undefined): Decision<C, E, S> {
    const decision = this.handler.decideOn(item, loaded);
    this.decisions.push(decision);
    return decision;
  }

  /**
   * A write of the use case's own that needs no answer before the end: sent together with the events, the
   * projections and the outbox rows (they queue on the transaction's connection in one go).
   */
  also(write: () => Promise<unknown>): void {
    this.alongside.push(write);
  }
}

/**
 * The one way a change is made. `write` runs a use case's plan in one transaction: the plan reads and decides
 * through its `WriteTransaction`; then the handler appends the new events (each stream at the version it was
 * read at), applies the inline projections registered for it, and adds the outbox rows of the events that
 * send a message, all with the plan's own writes. Once committed, the rows go to the dispatcher. A version
 * conflict (another writer got to a stream first) runs the transaction again, reading afresh, after a
 * jittered wait.
 */
export class CommandHandler<C, E extends DomainEvent, S> {
  private readonly upcaster: EventUpcaster;

  constructor(
    private readonly decider: Decider<C, E, S>,
    readonly streamOf: (command: C) => string,
    private readonly belongs: (event: DomainEvent) => event is E,
    private readonly path: WritePath<C, E, S>,
  ) {
    this.upcaster = path.upcaster ?? defaultUpcaster;
  }

  async write<R>(
    plan: (tx: WriteTransaction<C, E, S>) => Promise<R>,
    options: Readonly<{ retry?: RetryPolicy }> = {},
  ): Promise<R> {
    const retry = options.retry ?? CONFLICT_RETRY;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const { result, messages } = await this.path.unitOfWork.run(async (stores) => {
          const tx = new WriteTransaction(stores, this);
          const result = await plan(tx);
          return { result, messages: await this.flush(tx) };
        });
        if (messages.length > 0) this.path.dispatcher.dispatchSoon(messages);
        return result;
      } catch (error) {
        if (!(error instanceof VersionConflict) || attempt >= retry.attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs(retry, attempt)));
      }
    }
  }

  /** Reads streams and folds each into its state. */
  async load(events: EventStore, streamIds: readonly string[]): Promise<Map<string, Loaded<S>>> {
    const loaded = new Map<string, Loaded<S>>();
    if (streamIds.length === 0) return loaded;
    const { evolve, initialState } = this.decider;
    for (const [streamId, { events: history, version }] of await events.readMany(streamIds)) {
      let state = initialState;
      for (const stored of history) if (this.belongs(stored.event)) state = evolve(state, stored.event);
      loaded.set(streamId, { state, version, history });
    }
    return loaded;
  }

  /** Decides one command on a loaded stream (undefined: a new stream). Appends nothing. */
  decideOn(item: CommandItem<C>, loaded: Loaded<S> | undefined): Decision<C, E, S> {
    const { decide, evolve, initialState } = this.decider;
    const { command, context: given } = item;
    const before = loaded?.state ?? initialState;
    const made = decide(command, before);
    const context = typeof given === 'function' ? given(loaded?.history ?? []) : given;
    const envelopes = made.map((event): EventEnvelope<E> => ({
      eventId: this.path.ids.next(),
      schemaVersion: this.upcaster.versionOf(event.type),
      ...context,
      event,
    }));
    return {
      command,
      streamId: this.streamOf(command),
      before,
      state: made.reduce(evolve, before),
      version: loaded?.version ?? 0,
      envelopes,
    };
  }

  /** The transaction's writes at once: events, projections, outbox rows and the plan's own. */
  private async flush(tx: WriteTransaction<C, E, S>): Promise<NewOutboxMessage[]> {
    const { stores } = tx;
    const changed = tx.decisions.filter((d) => d.envelopes.length > 0);
    const messages = messagesOf(changed.flatMap((d) => d.envelopes));
    const appends: StreamAppend[] = changed.map((d) => ({
      streamId: d.streamId,
      events: d.envelopes,
      expectedVersion: d.version,
    }));
    const settled = await Promise.allSettled([
      appends.length > 0 ? stores.events.appendMany(appends) : undefined,
      ...(changed.length > 0 ? this.path.projections.map((project) => project(stores, changed)) : []),
      messages.length > 0 ? stores.outbox.addMany(messages, this.path.clock.now()) : undefined,
      ...tx.alongside.map((write) => write()),
    ]);
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    // another writer got to a stream first: its rows may fail the writes queued after the append (its outbox
    // row, its projection) before the append's conflict is told; the conflict is what happened, and a rerun
    // reads what the other writer did
    if (failures.length > 0) throw failures.find((e) => e instanceof VersionConflict) ?? failures[0];
    return messages;
  }
}
