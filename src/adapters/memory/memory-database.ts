import type { StoredEvent, OrderView, OutboxMessage, ProductRecord } from '../../application/index.js';

/** Undo steps of one transaction, run in reverse on rollback. */
export type Journal = { undo: Array<() => void> } | null;

/** The tables of the memory profile, shared by its stores. */
export class MemoryDatabase {
  readonly events: StoredEvent[] = [];
  readonly streams = new Map<string, StoredEvent[]>();
  readonly products = new Map<number, ProductRecord>();
  readonly orders = new Map<string, OrderView>();
  readonly outbox = new Map<string, OutboxMessage>();
  nextProductId = 1;
  private tail: Promise<void> = Promise.resolve();

  /** Transactions run one at a time, like a single writer on a row-locked table. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let done!: () => void;
    this.tail = new Promise<void>((resolve) => (done = resolve));
    await previous;
    try {
      return await work();
    } finally {
      done();
    }
  }
}

/** Sets `key` in `map`, remembering in the journal how to put the old value back. */
export const journaledSet = <K, V>(journal: Journal, map: Map<K, V>, key: K, value: V): void => {
  if (journal) {
    const had = map.has(key);
    const old = map.get(key);
    journal.undo.push(() => (had ? map.set(key, old as V) : map.delete(key)));
  }
  map.set(key, value);
};
