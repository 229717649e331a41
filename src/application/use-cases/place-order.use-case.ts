import type { GroupCommitOptions } from '../group-commit.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';
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
  UnitOfWork,
} from '../ports/index.js';

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
  unitOfWork: UnitOfWork;
  dispatcher: OutboxDispatcher;
  clock: Clock;
  ids: IdGenerator;
  /** ids of the events the orders start with; `ids` when absent */
  eventIds?: IdGenerator;
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

  constructor(private readonly deps: PlaceOrderDeps) {
    this.admission = new OrderAdmission(deps);
    this.journal = new ReservationJournal({ ...deps, eventIds: deps.eventIds ?? deps.ids });
    this.replays = new KeyReplay(deps.orders, this.journal, deps.metrics);
  }

  /** Resolves once every reservation handed to the journal so far has been written or has failed. */
  settled(): Promise<void> {
    return this.journal.settled();
  }

  async execute(cmd: PlaceOrderCommand): Promise<PlaceOrderResult> {
    const admitted = await this.admission.check(cmd);
    if (isRejection(admitted)) return admitted;
    const orderId = this.deps.ids.next();
    const answer = await this.admission.attempt(cmd, admitted, orderId);
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
