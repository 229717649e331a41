import type { OrderView, OutboxMessage, ProductRecord, StoredEvent } from '../../application/index.js';

export type Tables = {
  products: Map<number, ProductRecord>;
  orders: Map<string, OrderView>;
  outbox: Map<string, OutboxMessage>;
  streams: Map<string, readonly StoredEvent[]>;
};
export type TableName = keyof Tables;
type KeyOf<T extends TableName> = Tables[T] extends Map<infer K, unknown> ? K : never;
type RowOf<T extends TableName> = Tables[T] extends Map<unknown, infer V> ? V : never;

export interface TableReader {
  get<T extends TableName>(table: T, key: KeyOf<T>): RowOf<T> | undefined;
  rows<T extends TableName>(table: T): RowOf<T>[];
  /** The global event log, in position order. */
  log(): readonly StoredEvent[];
}

export interface TableWriter extends TableReader {
  set<T extends TableName>(table: T, key: KeyOf<T>, row: RowOf<T>): void;
  appendToLog(events: readonly StoredEvent[]): void;
  nextProductId(): number;
}

/** What a store reads and writes through: committed data, or one transaction's own view of it. */
export interface MemorySession extends TableReader {
  /** Runs a change: at once inside a transaction; outside, once no transaction is open (like a row lock). */
  write<R>(change: (tables: TableWriter) => R): Promise<R>;
}

/** A store built on the database itself works on committed data; one built on a transaction, inside it. */
export const sessionOf = (source: MemoryDatabase | MemorySession): MemorySession =>
  source instanceof MemoryDatabase ? source.session() : source;

/** The tables of the memory profile, shared by its stores. Writers take turns; readers see committed rows only. */
export class MemoryDatabase {
  readonly tables: Tables = { products: new Map(), orders: new Map(), outbox: new Map(), streams: new Map() };
  readonly events: StoredEvent[] = [];
  productIds = 0;
  private tail: Promise<void> = Promise.resolve();

  get products(): ReadonlyMap<number, ProductRecord> {
    return this.tables.products;
  }

  get orders(): ReadonlyMap<string, OrderView> {
    return this.tables.orders;
  }

  get outbox(): ReadonlyMap<string, OutboxMessage> {
    return this.tables.outbox;
  }

  /** Runs work while no other writer runs. */
  async exclusive<T>(work: () => Promise<T> | T): Promise<T> {
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

  /** Reads and writes committed data directly; each write waits for its turn. */
  session(): MemorySession {
    const committed: TableWriter = {
      get: (table, key) => (this.tables[table] as Map<unknown, never>).get(key),
      rows: (table) => [...(this.tables[table] as Map<unknown, never>).values()],
      log: () => this.events,
      set: (table, key, row) => void (this.tables[table] as Map<unknown, unknown>).set(key, row),
      appendToLog: (events) => void this.events.push(...events),
      nextProductId: () => ++this.productIds,
    };
    return { ...committed, write: (change) => this.exclusive(() => change(committed)) };
  }
}

/**
 * A transaction's view: its own writes kept aside and laid over the committed rows, applied in one step on
 * commit, dropped on rollback. Only one transaction writes at a time, so what it read stays true.
 */
export class MemoryTransaction implements MemorySession {
  private readonly changes = new Map<TableName, Map<unknown, unknown>>();
  private readonly appended: StoredEvent[] = [];
  private productIds: number;

  constructor(private readonly db: MemoryDatabase) {
    this.productIds = db.productIds;
  }

  get<T extends TableName>(table: T, key: KeyOf<T>): RowOf<T> | undefined {
    const changed = this.changes.get(table);
    if (changed?.has(key)) return changed.get(key) as RowOf<T>;
    return (this.db.tables[table] as Map<unknown, RowOf<T>>).get(key);
  }

  rows<T extends TableName>(table: T): RowOf<T>[] {
    const changed = this.changes.get(table);
    const base = this.db.tables[table] as Map<unknown, RowOf<T>>;
    if (!changed) return [...base.values()];
    const merged = new Map<unknown, RowOf<T>>(base);
    for (const [key, row] of changed) merged.set(key, row as RowOf<T>);
    return [...merged.values()];
  }

  log(): readonly StoredEvent[] {
    return this.appended.length === 0 ? this.db.events : [...this.db.events, ...this.appended];
  }

  async write<R>(change: (tables: TableWriter) => R): Promise<R> {
    return Promise.resolve().then(() => change(this.writer()));
  }

  commit(): void {
    for (const [table, rows] of this.changes) {
      const target = this.db.tables[table] as Map<unknown, unknown>;
      for (const [key, row] of rows) target.set(key, row);
    }
    this.db.events.push(...this.appended);
    this.db.productIds = this.productIds;
  }

  private writer(): TableWriter {
    return {
      get: (table, key) => this.get(table, key),
      rows: (table) => this.rows(table),
      log: () => this.log(),
      set: (table, key, row) => {
        const changed = this.changes.get(table) ?? new Map<unknown, unknown>();
        this.changes.set(table, changed);
        changed.set(key, row);
      },
      appendToLog: (events) => void this.appended.push(...events),
      nextProductId: () => ++this.productIds,
    };
  }
}
