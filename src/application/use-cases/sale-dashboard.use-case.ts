import type { ReleaseReason } from '../../domain/index.js';
import {
  type ConsumerLag,
  type GroupLag,
  type Inventory,
  type Metrics,
  type Outbox,
  type OrderReadModel,
  OutboxStatus,
  type StockGate,
} from '../ports/index.js';

export type ProductFigures = Readonly<{
  productId: number;
  name: string;
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

export type OutboxFigures = Readonly<Record<'pending' | 'sent' | 'consumed' | 'failed' | 'dead', number>>;

export type SaleFigures = Readonly<{
  at: string;
  products: ProductFigures[];
  outbox: OutboxFigures;
  consumerLag: GroupLag[];
}>;

const OUTBOX_NAMES = {
  pending: OutboxStatus.PENDING,
  sent: OutboxStatus.SENT,
  consumed: OutboxStatus.CONSUMED,
  failed: OutboxStatus.FAILED,
  dead: OutboxStatus.DEAD,
} as const;

export type SaleDashboardDeps = Readonly<{
  inventory: Inventory;
  orders: OrderReadModel;
  gate: StockGate;
  outbox: Outbox;
  lag: ConsumerLag;
  metrics: Metrics;
  now: () => string;
}>;

/**
 * The figures an operator watches during a sale, gathered in one pass: per product the gate, MySQL and the
 * orders by status; the outbox by status; how far the consumers are behind. Each call also sets the gauges
 * Prometheus scrapes, so the Grafana dashboard and the live page show the same numbers.
 */
export class SaleDashboard {
  constructor(private readonly deps: SaleDashboardDeps) {}

  async gather(): Promise<SaleFigures> {
    const { inventory, orders, gate, outbox, lag, metrics } = this.deps;
    const products: ProductFigures[] = [];
    for (const product of await inventory.list()) {
      const gateStock = await gate.stockLeft(product.productId);
      let sold = 0;
      let reserved = 0;
      const released: Partial<Record<ReleaseReason, number>> = {};
      for (const tally of await orders.tally(product.productId)) {
        if (tally.status === 'COMMITTED' || tally.status === 'PAID') sold += tally.units;
        else if (tally.status === 'RESERVED') reserved += tally.units;
        else if (tally.reason) released[tally.reason] = (released[tally.reason] ?? 0) + tally.units;
      }
      products.push({
        productId: product.productId,
        name: product.name,
        gateStock,
        mysqlStock: product.stock,
        sold,
        reserved,
        released,
      });
      const labels = { product: String(product.productId) };
      if (gateStock !== null) metrics.gauge('gate_stock', gateStock, labels);
      metrics.gauge('mysql_stock', product.stock, labels);
    }
    const counts = await outbox.countByStatus();
    const outboxFigures = Object.fromEntries(
      Object.entries(OUTBOX_NAMES).map(([name, status]) => [name, counts[status]]),
    ) as Record<keyof typeof OUTBOX_NAMES, number>;
    for (const [name, value] of Object.entries(outboxFigures))
      metrics.gauge('outbox_rows', value, { status: name });
    const consumerLag = await lag.lag();
    for (const group of consumerLag)
      metrics.gauge('consumer_lag', group.lag, { group: group.groupId, topic: group.topic });
    return { at: this.deps.now(), products, outbox: outboxFigures, consumerLag };
  }
}
