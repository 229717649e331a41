import type { Decider, DomainEvent } from '../domain/index.js';
import { defaultUpcaster, type EventUpcaster } from './event-schema.js';
import {
  type EventEnvelope,
  type EventStore,
  type IdGenerator,
  type StoredEvent,
  type StreamAppend,
  VersionConflict,
} from './ports/index.js';

/** What an envelope says of the events a command makes, beside their id and schema version. */
export type EventContext = Readonly<{
  occurredAt: string;
  correlationId: string;
  causationId: string | null;
  userId?: string;
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

/**
 * The one way a change is made: read the stream, fold it with `evolve`, `decide`, append the new events
 * with the version read as the expected one. It runs inside the caller's transaction, so the caller's other
 * writes (stock, read model, outbox) commit with the events; `retryOnConflict` runs the transaction again
 * when another writer got to a stream first.
 */
export class CommandHandler<C, E extends DomainEvent, S> {
  constructor(
    private readonly decider: Decider<C, E, S>,
    private readonly streamOf: (command: C) => string,
    private readonly belongs: (event: DomainEvent) => event is E,
    private readonly ids: IdGenerator,
    private readonly upcaster: EventUpcaster = defaultUpcaster,
  ) {}

  async handle(events: EventStore, item: CommandItem<C>): Promise<Decision<C, E, S>> {
    const [decision] = await this.handleMany(events, [item]);
    return decision!;
  }

  /** Several commands, each on its own stream: one read of the streams, one append, all or nothing. */
  async handleMany(events: EventStore, items: readonly CommandItem<C>[]): Promise<Array<Decision<C, E, S>>> {
    const decisions = await this.decideMany(events, items);
    await this.append(events, decisions);
    return decisions;
  }

  /**
   * `handleMany` without the append, for a caller that sends the append together with its other writes
   * (they queue on the transaction's connection in one go).
   */
  async decideMany(events: EventStore, items: readonly CommandItem<C>[]): Promise<Array<Decision<C, E, S>>> {
    const loaded = await this.load(
      events,
      items.filter((i) => !i.isNew).map((i) => this.streamOf(i.command)),
    );
    return items.map((item) =>
      this.decideOn(item, item.isNew ? undefined : loaded.get(this.streamOf(item.command))),
    );
  }

  /** Reads streams and folds each into its state (for a caller that picks its commands by state). */
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
      eventId: this.ids.next(),
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

  /** Appends what was decided, each stream at the version it was read at. */
  append(events: EventStore, decisions: ReadonlyArray<Decision<C, E, S>>): Promise<void> {
    const appends: StreamAppend[] = decisions
      .filter((d) => d.envelopes.length > 0)
      .map((d) => ({ streamId: d.streamId, events: d.envelopes, expectedVersion: d.version }));
    return appends.length > 0 ? events.appendMany(appends) : Promise.resolve();
  }
}

/**
 * Runs a transaction again when it lost a race for a stream (VersionConflict), reading the streams afresh,
 * up to `attempts` times in all. The last conflict is thrown.
 */
export const retryOnConflict = async <T>(work: () => Promise<T>, attempts = 3): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof VersionConflict) || attempt >= attempts) throw error;
    }
  }
};
