import type { GroupCommitOptions } from '../group-commit.js';
import type { OrderCommands } from '../order-stream.js';
import {
  type OrderRejection,
  type PlaceOrderCommand,
  type PlaceOrderResult,
} from '../place-order/answers.js';
import { KeyReplay } from '../place-order/key-replay.js';
import { type Admitted, OrderAdmission, type OrderBudgets } from '../place-order/order-admission.js';
import { ReservationJournal } from '../place-order/reservation-journal.js';
import type { ProductCatalog } from '../product-catalog.js';
import type {
  Clock,
  IdGenerator,
  Logger,
  Metrics,
  OrderReadModel,
  RateLimiter,
  SoldOutFlags,
  StockGate,
  Tracer,
} from '../ports/index.js';
import { NO_TRACING } from '../ports/index.js';
import { Spans } from '../traced-messaging.js';

export type { OrderRejectionCode, PlaceOrderCommand, PlaceOrderResult } from '../place-order/answers.js';
export type { BudgetSize, OrderBudgets } from '../place-order/order-admission.js';

export type PlaceOrderDeps = Readonly<{
  catalog: ProductCatalog;
  /** the order route's budgets, per buyer and per client address, spent by the gate (null: off) */
  budgets: OrderBudgets;
  /** the reads' budget, spent by a buyer to have a product looked up that this process does not keep */
  lookups?: RateLimiter | null;
  soldOut: SoldOutFlags;
  gate: StockGate;
  /** where a repeated request looks for the order its key made */
  orders: Pick<OrderReadModel, 'get'>;
  /** where a reservation becomes an order: the order stream's command handler */
  commands: OrderCommands;
  clock: Clock;
  /** the orders' ids */
  ids: IdGenerator;
  logger: Logger;
  metrics: Metrics;
  lockLeaseMs: number;
  /** how long a buyer's Idempotency-Key is kept: as long as a sale may last */
  idempotencyKeyTtlMs: number;
  /** the most live keys one buyer holds on one product (0 or absent: no bound) */
  idempotencyKeysMax?: number;
  /** how reservations that pass the gate together are written together */
  groupCommit: GroupCommitOptions;
  /** the most reservations of a sold-out product whose buyers are kept in process */
  soldOutBuyersMax?: number;
  /** spans for the steps of an order (none when absent) */
  tracer?: Tracer;
}>;

/**
 * The hot path, top-down: the checks made in process; one atomic gate call (budgets, lock, key, path token,
 * limit, stock: one Redis round trip); then a reservation is recorded in MySQL with the others of its moment
 * (group commit), or a repeat is answered from its key. The buyer's lock is freed after the answer.
 */
export class PlaceOrder {
  private readonly admission: OrderAdmission;
  private readonly journal: ReservationJournal;
  private readonly replays: KeyReplay;
  private readonly tracer: Tracer;

  constructor(private readonly deps: PlaceOrderDeps) {
    this.tracer = deps.tracer ?? NO_TRACING;
    this.admission = new OrderAdmission(deps);
    this.journal = new ReservationJournal({ ...deps, orders: deps.commands, tracer: this.tracer });
    this.replays = new KeyReplay(deps.orders, this.journal, deps.metrics);
  }

  /** Resolves once every reservation handed to the journal so far has been written or has failed. */
  settled(): Promise<void> {
    return this.journal.settled();
  }

  async execute(cmd: PlaceOrderCommand): Promise<PlaceOrderResult> {
    const { traceparent } = cmd;
    const admitted =
      traceparent === undefined
        ? await this.admission.check(cmd)
        : await this.tracer.child(Spans.ADMISSION, traceparent, () => this.admission.check(cmd));
    if (isRejection(admitted)) return admitted;
    const orderId = this.deps.ids.next();
    const answer =
      traceparent === undefined
        ? await this.admission.attempt(cmd, admitted, orderId)
        : await this.tracer.child(
            Spans.GATE,
            traceparent,
            () => this.admission.attempt(cmd, admitted, orderId),
            {
              kind: 'client',
              attributes: { 'seckill.order_id': orderId, 'seckill.product_id': cmd.productId },
            },
          );
    if (!answer.ok) return this.admission.refusal(cmd, admitted, answer);
    // an ok answer holds the buyer's lock until the order is recorded or the repeat answered
    try {
      if ('replayOf' in answer) return await this.replays.answer(cmd, answer.replayOf);
      this.admission.reserved(cmd);
      await this.journal.record(cmd, orderId);
      return { ok: true, orderId, status: 'RESERVED' };
    } finally {
      this.admission.release(cmd, orderId);
    }
  }
}

const isRejection = (checked: Admitted | OrderRejection): checked is OrderRejection => 'ok' in checked;
