import { assertOrderQuantity, purchaseRejection, type ReserveOrder } from '../../domain/index.js';
import type { CommandItem } from '../command-handler.js';
import { GroupCommit, type GroupCommitOptions } from '../group-commit.js';
import { messagesOf } from '../messages.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';
import { type OrderCommands, orderCommands, projectOrders } from '../order-stream.js';
import type { ProductCatalog } from '../product-catalog.js';
import {
  type Clock,
  type DuplicateRequestLock,
  type IdGenerator,
  InfrastructureUnavailable,
  type LockHandle,
  type Logger,
  type Metrics,
  orderLockKey,
  type RateBudgets,
  type RateDecision,
  type SalePathRedemption,
  type SalePaths,
  type SoldOutFlags,
  type StockGate,
  type UnitOfWork,
} from '../ports/index.js';

export type PlaceOrderCommand = Readonly<{
  userId: string;
  productId: number;
  quantity: number;
  correlationId: string;
  /**
   * The address the request came from, for the per-address budget: asked only when that budget is on and the
   * order got past the sold-out flag (under a trusted proxy it means parsing X-Forwarded-For).
   */
  clientAddress?: (() => string | undefined) | undefined;
  /** the sale path token, for a product that requires one */
  pathToken?: string | undefined;
}>;

export type OrderRejectionCode =
  | 'SOLD_OUT'
  | 'LIMIT_EXCEEDED'
  | 'SALE_NOT_ACTIVE'
  | 'DUPLICATE_REQUEST'
  | 'RATE_LIMITED'
  | 'PRODUCT_NOT_FOUND'
  | 'PATH_TOKEN_REQUIRED'
  | 'PATH_TOKEN_INVALID';

export type PlaceOrderResult =
  | Readonly<{ ok: true; orderId: string; status: 'RESERVED' }>
  | Readonly<{ ok: false; code: OrderRejectionCode; detail: string; retryAfterMs?: number }>;

const rejected = (code: OrderRejectionCode, detail: string, retryAfterMs?: number): PlaceOrderResult =>
  retryAfterMs === undefined ? { ok: false, code, detail } : { ok: false, code, detail, retryAfterMs };

const ALLOWED_HERE: Promise<RateDecision> = Promise.resolve({ allowed: true });
const NO_TOKEN_ASKED: Promise<SalePathRedemption | null> = Promise.resolve(null);

const PATH_TOKEN_REFUSALS: Readonly<Record<Exclude<SalePathRedemption, 'REDEEMED'>, string>> = {
  UNKNOWN:
    'the path token is unknown, used or expired: ask POST /api/v1/seckill/products/{id}/path for a new one',
  NOT_YOURS: 'the path token was issued to another buyer',
};

export type PlaceOrderDeps = Readonly<{
  catalog: ProductCatalog;
  /** the budgets asked on the order path: per buyer and per client address (null: off) */
  budgets: Pick<RateBudgets, 'orderUser' | 'orderAddress'>;
  salePaths: SalePaths;
  soldOut: SoldOutFlags;
  lock: DuplicateRequestLock;
  gate: StockGate;
  unitOfWork: UnitOfWork;
  dispatcher: OutboxDispatcher;
  clock: Clock;
  ids: IdGenerator;
  /** ids of the events the orders start with; `ids` when absent */
  eventIds?: IdGenerator;
  logger: Logger;
  metrics: Metrics;
  lockLeaseMs: number;
  /** how reservations that pass the gate together are written together */
  groupCommit: GroupCommitOptions;
}>;

/** A reservation the gate accepted: the command that starts the order's stream. */
type Reservation = CommandItem<ReserveOrder>;

/**
 * The hot path. Cheap in-process checks first, then one lock and one atomic gate call in Redis, then the
 * reservation is recorded in MySQL: reservations that pass the gate at about the same time share one
 * transaction (group commit), and each buyer is answered when that transaction has committed. The broker is
 * never awaited: the outbox row makes the reservation durable.
 */
export class PlaceOrder {
  private readonly journal: GroupCommit<Reservation>;
  private readonly orders: OrderCommands;

  constructor(private readonly deps: PlaceOrderDeps) {
    this.orders = orderCommands(deps.eventIds ?? deps.ids);
    this.journal = new GroupCommit((batch) => this.write(batch), deps.groupCommit);
  }

  /** Resolves once every reservation handed to the journal so far has been written or has failed. */
  settled(): Promise<void> {
    return this.journal.settled();
  }

  async execute(cmd: PlaceOrderCommand): Promise<PlaceOrderResult> {
    const { catalog, soldOut, clock } = this.deps;
    assertOrderQuantity(cmd.quantity);
    // In order of cost. The sold-out flag first: once a product is gone, its flood costs no Redis call at
    // all. Then the product's terms, kept in process (unknown ids too).
    if (soldOut.isSoldOut(cmd.productId)) return rejected('SOLD_OUT', `product ${cmd.productId} is sold out`);
    const terms = await catalog.terms(cmd.productId);
    if (!terms) return rejected('PRODUCT_NOT_FOUND', `product ${cmd.productId} does not exist`);
    const rule = purchaseRejection(terms, cmd.quantity, clock.now());
    if (rule) return rejected(rule.code, rule.detail);
    if (terms.requirePathToken && cmd.pathToken === undefined)
      return rejected(
        'PATH_TOKEN_REQUIRED',
        `product ${cmd.productId} takes orders with a path token: POST /api/v1/seckill/products/${cmd.productId}/path`,
      );
    const handle = await this.admit(cmd, terms.requirePathToken);
    if (!handle.ok) return handle.rejection;
    try {
      return await this.reserve(cmd, terms.perUserLimit);
    } finally {
      await this.release(handle.lock);
    }
  }

  /**
   * The client address's and the buyer's budgets, the sale path token and the duplicate-request lock, asked
   * at once: the calls leave for Redis together (one round trip). Over a budget: RATE_LIMITED, and a lock
   * taken meanwhile is given back. A token that is not this buyer's, unknown, used or expired:
   * PATH_TOKEN_INVALID. A lock held by another request of the buyer: DUPLICATE_REQUEST. A token is used up
   * by the request that carried it, whatever its answer: the buyer asks for another.
   */
  private async admit(
    cmd: PlaceOrderCommand,
    requirePathToken: boolean,
  ): Promise<
    Readonly<{ ok: true; lock: LockHandle }> | Readonly<{ ok: false; rejection: PlaceOrderResult }>
  > {
    const { budgets, salePaths, lock: locks, lockLeaseMs } = this.deps;
    const clientAddress = budgets.orderAddress ? cmd.clientAddress?.() : undefined;
    const [address, user, path, lock] = await Promise.allSettled([
      budgets.orderAddress && clientAddress !== undefined
        ? budgets.orderAddress.tryConsume(clientAddress)
        : ALLOWED_HERE,
      budgets.orderUser ? budgets.orderUser.tryConsume(cmd.userId) : ALLOWED_HERE,
      requirePathToken && cmd.pathToken !== undefined
        ? salePaths.redeem(cmd.pathToken, cmd.userId, cmd.productId)
        : NO_TOKEN_ASKED,
      locks.tryLock(orderLockKey(cmd.userId, cmd.productId), { waitMs: 0, leaseMs: lockLeaseMs }),
    ]);
    const refusal = this.refusal(address, user, path, lock);
    if (refusal) {
      if (lock.status === 'fulfilled' && lock.value) await this.release(lock.value);
      if (refusal instanceof Error) throw refusal;
      return { ok: false, rejection: refusal };
    }
    if (lock.status === 'rejected') throw lock.reason;
    if (!lock.value)
      return {
        ok: false,
        rejection: rejected('DUPLICATE_REQUEST', 'an order for this product is already being placed', 1_000),
      };
    return { ok: true, lock: lock.value };
  }

  /** What turns the request away before the lock is looked at: a fault, a budget, then the path token. */
  private refusal(
    address: PromiseSettledResult<RateDecision>,
    user: PromiseSettledResult<RateDecision>,
    path: PromiseSettledResult<SalePathRedemption | null>,
    lock: PromiseSettledResult<LockHandle | null>,
  ): PlaceOrderResult | Error | null {
    for (const settled of [address, user, path, lock])
      if (settled.status === 'rejected')
        return settled.reason instanceof Error ? settled.reason : new Error(String(settled.reason));
    const byAddress = (address as PromiseFulfilledResult<RateDecision>).value;
    if (!byAddress.allowed)
      return rejected(
        'RATE_LIMITED',
        'too many order requests from this address, slow down',
        byAddress.retryAfterMs,
      );
    const byUser = (user as PromiseFulfilledResult<RateDecision>).value;
    if (!byUser.allowed) return rejected('RATE_LIMITED', 'too many requests, slow down', byUser.retryAfterMs);
    const redemption = (path as PromiseFulfilledResult<SalePathRedemption | null>).value;
    if (redemption !== null && redemption !== 'REDEEMED')
      return rejected('PATH_TOKEN_INVALID', PATH_TOKEN_REFUSALS[redemption]);
    return null;
  }

  private async release(lock: LockHandle): Promise<void> {
    await lock.release().catch((error: unknown) => {
      this.deps.logger.warn(
        { key: lock.key, err: String(error) },
        'lock release failed; it expires on its own',
      );
    });
  }

  private async reserve(cmd: PlaceOrderCommand, perUserLimit: number): Promise<PlaceOrderResult> {
    const { gate, soldOut, ids } = this.deps;
    const orderId = ids.next();
    const answer = await gate.reserve({
      productId: cmd.productId,
      orderId,
      userId: cmd.userId,
      quantity: cmd.quantity,
      perUserLimit,
    });
    if (!answer.ok) {
      switch (answer.reason) {
        case 'SOLD_OUT':
          // only an empty gate turns the flood away in process; a large order must not shut out a small one
          if (answer.stockLeft <= 0) soldOut.markSoldOut(cmd.productId);
          return rejected('SOLD_OUT', `product ${cmd.productId} is sold out`);
        case 'LIMIT_EXCEEDED':
          return rejected('LIMIT_EXCEEDED', `at most ${perUserLimit} per buyer`);
        case 'NOT_LOADED':
          throw new InfrastructureUnavailable(
            'stock gate',
            `product ${cmd.productId} is not loaded in the gate`,
          );
      }
    }
    // a lapsed sold-out mark let this order look at the gate, and the gate had stock: the mark goes
    soldOut.markAvailable(cmd.productId);
    await this.record(cmd, orderId);
    return { ok: true, orderId, status: 'RESERVED' };
  }

  private async record(cmd: PlaceOrderCommand, orderId: string): Promise<void> {
    try {
      await this.journal.submit(this.reservation(cmd, orderId));
    } catch (error) {
      await this.restoreGate(cmd.productId, orderId);
      if (error instanceof InfrastructureUnavailable) throw error;
      throw new InfrastructureUnavailable('database', 'the reservation could not be recorded', {
        cause: error,
      });
    }
  }

  /** The command that starts the order: the domain decides its first event when the batch is written. */
  private reservation(cmd: PlaceOrderCommand, orderId: string): Reservation {
    const now = this.deps.clock.now();
    const { productId, userId, quantity, correlationId } = cmd;
    return {
      command: { type: 'ReserveOrder', orderId, productId, userId, quantity, now },
      // the buyer's request is both the conversation and the cause of the order's first event
      context: { occurredAt: now, correlationId, causationId: correlationId, userId },
      isNew: true,
    };
  }

  /**
   * One transaction for a batch, through the command handler: the decider makes each order's first event (a
   * new stream: nothing to read), and a multi-row insert each goes to the event store, the orders
   * projection and the outbox.
   */
  private async write(batch: readonly Reservation[]): Promise<void> {
    const now = this.deps.clock.now();
    const messages = await this.deps.unitOfWork.run(async (stores) => {
      const decisions = await this.orders.decideMany(stores.events, batch);
      const outbound = messagesOf(decisions.flatMap((d) => d.envelopes));
      // issued at once: they queue on the transaction's connection without a turn of the event loop between
      await Promise.all([
        this.orders.append(stores.events, decisions),
        projectOrders(stores.orders, decisions),
        stores.outbox.addMany(outbound, now),
      ]);
      return outbound;
    });
    this.deps.dispatcher.dispatchSoon(messages);
    this.deps.metrics.count('reservations_recorded', {}, batch.length);
    this.deps.metrics.count('reservation_batches');
  }

  private async restoreGate(productId: number, orderId: string): Promise<void> {
    try {
      await this.deps.gate.restore(productId, orderId);
    } catch (error) {
      // An under-counted gate loses a sale; it never oversells. Reconciliation gives the unit back.
      this.deps.metrics.count('gate_restore_failures');
      this.deps.logger.error(
        { productId, orderId, err: String(error) },
        'gate restore failed after a failed transaction',
      );
    }
  }
}
