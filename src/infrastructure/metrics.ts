import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CounterName, GaugeName, InstanceCounts, Logger, Metrics } from '../application/index.js';
import { ORDER_ROUTE } from '../adapters/http/routes/place-order.js';

const HELP: Record<CounterName, string> = {
  order_answers: 'Answers to order placements, by code',
  gate_restore_failures: 'Gate restores that failed after a failed reservation transaction',
  reservations_recorded: 'Reservations written to MySQL (event, order row, outbox row)',
  reservations_outcome_unknown:
    'Reservations whose commit went unanswered: the gate keeps their unit and key for a repeat or reconciliation',
  reservation_batches:
    'Group-commit transactions that wrote reservations (reservations_recorded / this = the mean batch)',
  consumer_batches: 'Batches a consumer group handled (each one transaction per product)',
  consumer_messages:
    'Messages a consumer group handled (consumer_messages / consumer_batches = the mean batch it merged)',
  orders_committed: 'Orders whose stock MySQL committed',
  orders_released: 'Reservations released, by reason',
  outbox_published: 'Outbox rows published, by topic',
  outbox_publish_failures: 'Outbox publishes that failed, by topic',
  outbox_dead: 'Outbox rows given up on after the last attempt',
  reconciliation_fixes: 'Gate corrections made by reconciliation, by product',
  reconciliation_restores:
    'Units given back to the gate by orderId by reconciliation, by product: released orders whose restore the gate lost, reservations MySQL never recorded',
  idempotent_replays: 'Order requests answered with the order their Idempotency-Key had already made',
  idempotent_recoveries:
    'Of those, orders recorded by the repeat because the first try died between the gate and MySQL',
};

const LABELS: Record<CounterName, string[]> = {
  order_answers: ['code'],
  gate_restore_failures: [],
  reservations_recorded: [],
  reservations_outcome_unknown: [],
  reservation_batches: [],
  consumer_batches: ['group'],
  consumer_messages: ['group'],
  orders_committed: [],
  orders_released: ['reason'],
  outbox_published: ['topic'],
  outbox_publish_failures: ['topic'],
  outbox_dead: ['topic'],
  reconciliation_fixes: ['product'],
  reconciliation_restores: ['product'],
  idempotent_replays: [],
  idempotent_recoveries: [],
};

const GAUGES: Record<GaugeName, { help: string; labels: string[] }> = {
  outbox_rows: {
    help: 'Outbox rows not consumed yet, by status (pending, sent, failed, dead), as last counted (sampler, relay run or dashboard)',
    labels: ['status'],
  },
  gate_stock: {
    help: 'Stock left in the Redis gate, by product, as last read (sampler or dashboard)',
    labels: ['product'],
  },
  mysql_stock: {
    help: 'Stock MySQL has not committed, by product, as last read (sampler or dashboard)',
    labels: ['product'],
  },
  consumer_lag: {
    help: 'Messages a consumer group has not acknowledged yet, by group and topic',
    labels: ['group', 'topic'],
  },
  stock_drift: {
    help: 'Gate stock minus what MySQL says it should be, by product, at the last reconciliation',
    labels: ['product'],
  },
};

/** Prometheus metrics: the application's counters plus HTTP traffic, on one registry per service. */
export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly counters = new Map<CounterName, Counter>();
  readonly httpRequests: Counter<'method' | 'route' | 'code'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly gauges: Record<GaugeName, Gauge>;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'seckill_' });
    for (const name of Object.keys(HELP) as CounterName[]) {
      this.counters.set(
        name,
        new Counter({
          name: `seckill_${name}_total`,
          help: HELP[name],
          labelNames: LABELS[name],
          registers: [this.registry],
        }),
      );
    }
    this.gauges = Object.fromEntries(
      (Object.keys(GAUGES) as GaugeName[]).map((name) => [
        name,
        new Gauge({
          name: `seckill_${name}`,
          help: GAUGES[name].help,
          labelNames: GAUGES[name].labels,
          registers: [this.registry],
        }),
      ]),
    ) as Record<GaugeName, Gauge>;
    this.httpRequests = new Counter({
      name: 'seckill_http_requests_total',
      help: 'HTTP requests, by route and answer code',
      labelNames: ['method', 'route', 'code'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'seckill_http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
  }

  gauge(name: GaugeName, value: number, labels: Readonly<Record<string, string>> = {}): void {
    this.gauges[name].set(labels, value);
  }

  count(name: CounterName, labels: Readonly<Record<string, string>> = {}, by = 1): void {
    if (by > 0) this.counters.get(name)?.inc(labels, by);
  }

  /** A counter with its labels bound once, for a caller that counts the same label set again and again. */
  boundCounter(name: CounterName, labels: Readonly<Record<string, string>>): { inc: () => void } {
    const counter = this.counters.get(name);
    return counter ? counter.labels(labels) : { inc: () => undefined };
  }

  /**
   * What this process has counted since it started, for its beats: the order route's answers by status class
   * (every answer, the ones thrown to the error handler included) and what its commit consumer decided.
   */
  async instanceCounts(): Promise<InstanceCounts> {
    const counts = { accepted: 0, rejected: 0, failed: 0 };
    for (const { labels, value } of (await this.httpRequests.get()).values) {
      if (labels.route !== ORDER_ROUTE || labels.method !== 'POST') continue;
      const status = Number(labels.code);
      if (status === 202) counts.accepted += value;
      else if (status >= 500) counts.failed += value;
      else if (status >= 400) counts.rejected += value;
    }
    return {
      ...counts,
      committed: await this.total('orders_committed'),
      released: await this.total('orders_released'),
    };
  }

  private async total(name: CounterName): Promise<number> {
    const counter = this.counters.get(name);
    if (!counter) return 0;
    return (await counter.get()).values.reduce((sum, { value }) => sum + value, 0);
  }
}

/**
 * Reads the gauges that come from Redis, MySQL and the broker on a timer of its own, so that a scrape only
 * renders the registry: one reading per interval, however often and by however many the metrics are scraped.
 * A reading that fails is logged and leaves the gauges as they were; the next one tries again.
 */
export class GaugeSampler {
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private running = false;

  constructor(
    private readonly read: () => Promise<void>,
    private readonly everyMs: number,
    private readonly logger: Logger,
  ) {}

  /** Reads now, then `everyMs` after each reading ends (a slow reading is never overlapped by the next). */
  start(): void {
    if (this.running) return;
    this.running = true;
    // after a stop(), a reading still under way schedules the next one itself
    if (!this.reading) this.readNow();
  }

  /** Stops the timer and waits for a reading under way: it must not outlive the connections it reads. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.reading;
  }

  private readNow(): void {
    this.timer = null;
    this.reading = Promise.resolve()
      .then(() => this.read())
      .catch((error: unknown) => {
        this.logger.warn(
          { err: String(error) },
          'metrics: could not read the sampled gauges; they keep their last values',
        );
      })
      .finally(() => {
        this.reading = null;
        if (!this.running) return;
        // unref'd: the sampler never keeps a process alive that has nothing else to do
        this.timer = setTimeout(() => this.readNow(), this.everyMs).unref();
      });
  }
}
