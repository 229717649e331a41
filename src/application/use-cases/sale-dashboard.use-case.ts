import type { ReleaseReason } from '../../domain/index.js';
import {
  type ConsumerLag,
  type GroupLag,
  type InstanceCounts,
  type InstanceRegistry,
  type InstanceSighting,
  type Inventory,
  type Metrics,
  type Outbox,
  type OrderReadModel,
  OutboxStatus,
  type ProductRecord,
  type StockGate,
} from '../ports/index.js';

export type ProductFigures = Readonly<{
  productId: number;
  name: string;
  /** orders go through the sale path (a single-use token per order) */
  requirePathToken: boolean;
  /** what buyers meet: the gate's stock, null while the gate is not loaded */
  gateStock: number | null;
  /** MySQL's stock: what it has not committed yet */
  mysqlStock: number;
  /** units MySQL committed (paid or awaiting payment) */
  sold: number;
  /** units the gate reserved that MySQL has not decided yet */
  reserved: number;
  /** released units by reason */
  released: Partial<Record<ReleaseReason, number>>;
}>;

/** The outbox rows not consumed yet (consumed rows, most of a table that is never pruned, are not counted). */
export type OutboxFigures = Readonly<Record<'pending' | 'sent' | 'failed' | 'dead', number>>;

/** up: beating, every dependency ready; degraded: beating, a dependency failing; down: silent for 3 beats. */
export type InstanceStatus = 'up' | 'degraded' | 'down';

export type InstanceFigures = InstanceSighting & Readonly<{ status: InstanceStatus }>;

/** beats an instance may miss before it is shown down */
const MISSED_BEATS_WHEN_DOWN = 3;

const instanceStatus = (instance: InstanceSighting): InstanceStatus => {
  if (instance.lastSeenAgoMs > MISSED_BEATS_WHEN_DOWN * instance.beatEveryMs) return 'down';
  return Object.values(instance.ready).every((ready) => ready === 'ok') ? 'up' : 'degraded';
};

export type SaleFigures = Readonly<{
  at: string;
  products: ProductFigures[];
  outbox: OutboxFigures;
  consumerLag: GroupLag[];
  /** every process of the deployment seen within the registry's retention, down ones included */
  instances: InstanceFigures[];
  /** the instances' counts added up: the whole deployment's, as of each one's last beat */
  totals: InstanceCounts;
}>;

const NO_COUNTS: InstanceCounts = { accepted: 0, rejected: 0, failed: 0, committed: 0, released: 0 };

const addCounts = (sum: InstanceCounts, counts: InstanceCounts): InstanceCounts => ({
  accepted: sum.accepted + counts.accepted,
  rejected: sum.rejected + counts.rejected,
  failed: sum.failed + counts.failed,
  committed: sum.committed + counts.committed,
  released: sum.released + counts.released,
});

const OUTBOX_NAMES = {
  pending: OutboxStatus.PENDING,
  sent: OutboxStatus.SENT,
  failed: OutboxStatus.FAILED,
  dead: OutboxStatus.DEAD,
} as const;

export type SaleDashboardDeps = Readonly<{
  inventory: Inventory;
  orders: OrderReadModel;
  gate: StockGate;
  outbox: Outbox;
  lag: ConsumerLag;
  instances: InstanceRegistry;
  metrics: Metrics;
  now: () => string;
}>;

/**
 * The figures an operator watches during a sale: per product the gate, MySQL and the orders by status; the
 * outbox rows not consumed yet; how far the consumers are behind; every process of the deployment and what
 * it has answered. `gather` reads them all for the live page
 * and sets the gauges Prometheus scrapes on the way, so the Grafana dashboard and the page show the same
 * numbers; `refreshGauges` reads only what the gauges show, for the metrics sampler.
 */
export class SaleDashboard {
  constructor(private readonly deps: SaleDashboardDeps) {}

  async gather(): Promise<SaleFigures> {
    const { inventory, orders } = this.deps;
    const listed = await inventory.list();
    const gateStocks = await this.readStocks(listed);
    const products: ProductFigures[] = [];
    for (const [index, product] of listed.entries()) {
      let sold = 0;
      let reserved = 0;
      const released: Partial<Record<ReleaseReason, number>> = {};
      // one query per product, one after the other: the page must not take the order path's connections
      for (const tally of await orders.tally(product.productId)) {
        if (tally.status === 'COMMITTED' || tally.status === 'PAID') sold += tally.units;
        else if (tally.status === 'RESERVED') reserved += tally.units;
        else if (tally.reason) released[tally.reason] = (released[tally.reason] ?? 0) + tally.units;
      }
      products.push({
        productId: product.productId,
        name: product.name,
        requirePathToken: product.requirePathToken,
        gateStock: gateStocks[index] ?? null,
        mysqlStock: product.stock,
        sold,
        reserved,
        released,
      });
    }
    const outbox = await this.readOutbox();
    const consumerLag = await this.readLag();
    const instances = await this.readInstances();
    const totals = instances.reduce((sum, instance) => addCounts(sum, instance.counts), NO_COUNTS);
    return { at: this.deps.now(), products, outbox, consumerLag, instances, totals };
  }

  /**
   * Sets the gauges (gate and MySQL stock per product, outbox rows, consumer lag) from one fresh reading, and
   * reads nothing else: the orders tally per product is the live page's alone.
   */
  async refreshGauges(): Promise<void> {
    await this.readStocks(await this.deps.inventory.list());
    await this.readOutbox();
    await this.readLag();
  }

  /** Each product's gate stock (null: not loaded), read together; sets the stock gauges. */
  private async readStocks(products: readonly ProductRecord[]): Promise<Array<number | null>> {
    const { gate, metrics } = this.deps;
    const gateStocks = await Promise.all(products.map((p) => gate.stockLeft(p.productId)));
    for (const [index, product] of products.entries()) {
      const labels = { product: String(product.productId) };
      const gateStock = gateStocks[index] ?? null;
      if (gateStock !== null) metrics.gauge('gate_stock', gateStock, labels);
      metrics.gauge('mysql_stock', product.stock, labels);
    }
    return gateStocks;
  }

  private async readOutbox(): Promise<OutboxFigures> {
    const counts = await this.deps.outbox.countOpen();
    const figures = Object.fromEntries(
      Object.entries(OUTBOX_NAMES).map(([name, status]) => [name, counts[status]]),
    ) as Record<keyof typeof OUTBOX_NAMES, number>;
    for (const [name, value] of Object.entries(figures))
      this.deps.metrics.gauge('outbox_rows', value, { status: name });
    return figures;
  }

  /** Sorted by role, then host and pid, so that rows keep their places from one reading to the next. */
  private async readInstances(): Promise<InstanceFigures[]> {
    const sightings = await this.deps.instances.list();
    return sightings
      .map((sighting) => ({ ...sighting, status: instanceStatus(sighting) }))
      .sort(
        (a, b) =>
          a.role.localeCompare(b.role) ||
          a.host.localeCompare(b.host) ||
          a.pid - b.pid ||
          a.instanceId.localeCompare(b.instanceId),
      );
  }

  private async readLag(): Promise<GroupLag[]> {
    const consumerLag = await this.deps.lag.lag();
    for (const group of consumerLag)
      this.deps.metrics.gauge('consumer_lag', group.lag, { group: group.groupId, topic: group.topic });
    return consumerLag;
  }
}
