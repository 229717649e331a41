import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  Clock,
  CounterName,
  GaugeName,
  GateAnswer,
  GateReservation,
  GateSnapshot,
  IdGenerator,
  InstanceBeat,
  InstanceRegistry,
  InstanceSighting,
  Logger,
  MessagePublisher,
  Metrics,
  OutboundMessage,
  StockGate,
  TransactionalStores,
  UnitOfWork,
} from '../../src/application/index.js';
import { CommitOutcomeUnknown } from '../../src/application/index.js';

/** Set while a unit of work's callback runs, in that callback's async context only. */
export const insideTransaction = new AsyncLocalStorage<true>();

/** Counts calls to Redis- or Kafka-side ports made from inside a transaction: there must be none. */
export const callsFromTransactions = { count: 0, calls: [] as string[] };
const noteCall = (what: string): void => {
  if (insideTransaction.getStore()) {
    callsFromTransactions.count += 1;
    callsFromTransactions.calls.push(what);
  }
};

/** A clock the test moves by hand. `sleep` moves it on and resolves at once (after `onSleep`, if set). */
export class TestClock implements Clock {
  private at: number;
  /** Runs inside every sleep, after the time has moved: lets a test act "while the caller waits". */
  onSleep: ((ms: number) => Promise<void>) | null = null;

  constructor(start: string) {
    this.at = Date.parse(start);
  }

  now(): string {
    return new Date(this.at).toISOString();
  }

  set(instant: string): void {
    this.at = Date.parse(instant);
  }

  advance(ms: number): string {
    this.at += ms;
    return this.now();
  }

  async sleep(ms: number): Promise<void> {
    this.advance(ms);
    if (this.onSleep) await this.onSleep(ms);
  }
}

export type LogEntry = Readonly<{ level: 'info' | 'warn' | 'error'; message: string; details: object }>;

/** Prints nothing; keeps what was logged so that a test can look at it. */
export class SilentLogger implements Logger {
  readonly entries: LogEntry[] = [];

  info(details: object, message: string): void {
    this.entries.push({ level: 'info', message, details });
  }

  warn(details: object, message: string): void {
    this.entries.push({ level: 'warn', message, details });
  }

  error(details: object, message: string): void {
    this.entries.push({ level: 'error', message, details });
  }
}

type Count = Readonly<{ name: CounterName; labels: Readonly<Record<string, string>>; by: number }>;

export class RecordingMetrics implements Metrics {
  readonly counts: Count[] = [];
  /** the last value of each gauge, by name and labels */
  readonly gauges = new Map<string, number>();

  gauge(name: GaugeName, value: number, labels: Readonly<Record<string, string>> = {}): void {
    this.gauges.set(`${name}${JSON.stringify(labels)}`, value);
  }

  count(name: CounterName, labels: Readonly<Record<string, string>> = {}, by = 1): void {
    this.counts.push({ name, labels: { ...labels }, by });
  }

  /** The sum of a counter, over every label set or only those matching `labels`. */
  total(name: CounterName, labels: Readonly<Record<string, string>> = {}): number {
    return this.counts
      .filter((c) => c.name === name && Object.entries(labels).every(([k, v]) => c.labels[k] === v))
      .reduce((sum, c) => sum + c.by, 0);
  }
}

/** Predictable order ids, so that two runs of one scenario can be compared id by id. */
export class SequentialIds implements IdGenerator {
  private n = 0;

  constructor(private readonly prefix = 'order') {}

  next(): string {
    this.n += 1;
    return `${this.prefix}-${String(this.n).padStart(4, '0')}`;
  }
}

/**
 * Delegates to a real gate, counting calls; can be told to fail restores, like a Redis that went away, or to
 * lose them, like a Redis master that acknowledged the write and died before its replica had it.
 */
export class InstrumentedGate implements StockGate {
  reserveCalls = 0;
  restoreCalls = 0;
  unlockCalls = 0;
  reservedByCalls = 0;
  failRestores = false;
  loseRestores = false;

  constructor(private readonly inner: StockGate) {}

  warm(productId: number, stock: number, options?: { force?: boolean }): Promise<'WARMED' | 'ALREADY_LIVE'> {
    noteCall('gate.warm');
    return this.inner.warm(productId, stock, options);
  }

  reserve(reservation: GateReservation): Promise<GateAnswer> {
    noteCall('gate.reserve');
    this.reserveCalls += 1;
    return this.inner.reserve(reservation);
  }

  restore(
    productId: number,
    orderId: string,
    forgetKey?: Readonly<{ userId: string; key: string }>,
  ): Promise<boolean> {
    noteCall('gate.restore');
    this.restoreCalls += 1;
    if (this.failRestores) return Promise.reject(new Error('gate connection reset'));
    if (this.loseRestores) return Promise.resolve(true);
    return this.inner.restore(productId, orderId, forgetKey);
  }

  abandon(productId: number, orderId: string): Promise<boolean> {
    noteCall('gate.abandon');
    return this.inner.abandon(productId, orderId);
  }

  unlock(productId: number, userId: string, owner: string): Promise<boolean> {
    noteCall('gate.unlock');
    this.unlockCalls += 1;
    return this.inner.unlock(productId, userId, owner);
  }

  reservedBy(productId: number, max: number): Promise<ReadonlySet<string> | null> {
    noteCall('gate.reservedBy');
    this.reservedByCalls += 1;
    return this.inner.reservedBy(productId, max);
  }

  stockLeft(productId: number): Promise<number | null> {
    noteCall('gate.stockLeft');
    return this.inner.stockLeft(productId);
  }

  adjust(productId: number, delta: number): Promise<number | null> {
    noteCall('gate.adjust');
    return this.inner.adjust(productId, delta);
  }

  held(productId: number): Promise<Map<string, number>> {
    noteCall('gate.held');
    return this.inner.held(productId);
  }

  snapshot(productId: number): Promise<GateSnapshot> {
    noteCall('gate.snapshot');
    return this.inner.snapshot(productId);
  }
}

/**
 * A unit of work that can be told to fail its next transactions. The failure comes after the work has
 * written, as a failed COMMIT would, so that the rollback is exercised too.
 */
export class FlakyUnitOfWork implements UnitOfWork {
  private failuresLeft = 0;
  /** the next run's commit goes unanswered: `landed` says whether it committed all the same */
  private unanswered: { landed: boolean } | null = null;
  runs = 0;

  constructor(private readonly inner: UnitOfWork) {}

  failNext(times = 1): void {
    this.failuresLeft = times;
  }

  /** The next run's commit is sent and its answer lost (the writer died under it), landed or not. */
  commitUnanswered(landed: boolean): void {
    this.unanswered = { landed };
  }

  async run<T>(work: (stores: TransactionalStores) => Promise<T>): Promise<T> {
    this.runs += 1;
    const traced = (stores: TransactionalStores) => insideTransaction.run(true, () => work(stores));
    const unanswered = this.unanswered;
    this.unanswered = null;
    if (unanswered) {
      const lost = new CommitOutcomeUnknown('database', 'no answer to the commit: Connection lost');
      if (unanswered.landed) await this.inner.run(traced);
      else
        await this.inner.run(async (stores) => {
          await traced(stores);
          throw lost;
        });
      throw lost;
    }
    if (this.failuresLeft === 0) return this.inner.run(traced);
    this.failuresLeft -= 1;
    return this.inner.run(async (stores) => {
      await traced(stores);
      throw new Error('deadlock found when trying to get lock; try restarting transaction');
    });
  }
}

/** Delegates to the bus; while `failing`, every publish is refused as an unreachable broker would. */
export class SwitchablePublisher implements MessagePublisher {
  failing = false;
  attempts = 0;

  constructor(private readonly inner: MessagePublisher) {}

  publish(message: OutboundMessage): Promise<void> {
    return this.publishMany([message]);
  }

  publishMany(messages: readonly OutboundMessage[]): Promise<void> {
    noteCall('publisher.publish');
    this.attempts += 1;
    if (this.failing) return Promise.reject(new Error('broker not available'));
    return this.inner.publishMany(messages);
  }
}

/**
 * Delegates to a registry shared by several services of one test; once `killed`, the service's beats and its
 * removal on close go nowhere, as a process killed with SIGKILL would leave it: listed, and ageing.
 */
export class KillableRegistry implements InstanceRegistry {
  killed = false;

  constructor(private readonly inner: InstanceRegistry) {}

  beat(beat: InstanceBeat): Promise<void> {
    return this.killed ? Promise.resolve() : this.inner.beat(beat);
  }

  remove(instanceId: string): Promise<void> {
    return this.killed ? Promise.resolve() : this.inner.remove(instanceId);
  }

  list(): Promise<InstanceSighting[]> {
    return this.inner.list();
  }
}
