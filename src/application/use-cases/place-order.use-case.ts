import {
  assertOrderQuantity,
  type OrderStatus,
  purchaseRejection,
  type ReserveOrder,
} from '../../domain/index.js';
import type { CommandItem } from '../command-handler.js';
import { GroupCommit, type GroupCommitOptions } from '../group-commit.js';
import { messagesOf } from '../messages.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';
import { type OrderCommands, orderCommands, projectOrders } from '../order-stream.js';
import type { ProductCatalog } from '../product-catalog.js';
import {
  type Clock,
  type DuplicateRequestLock,
  answerFromKey,
  type GateAnswer,
  type IdGenerator,
  InfrastructureUnavailable,
  type KeyClaim,
  type LockHandle,
  type Logger,
  type Metrics,
  orderLockKey,
  type OrderReadModel,
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
  /**
   * The buyer's Idempotency-Key: a repeat of the request (same buyer, same key, same body) is answered as the
   * first one was and takes nothing more, whichever instance answers it and even after a crash.
   */
  idempotencyKey?: string | undefined;
}>;

export type OrderRejectionCode =
  | 'SOLD_OUT'
  | 'LIMIT_EXCEEDED'
  | 'SALE_NOT_ACTIVE'
  | 'DUPLICATE_REQUEST'
  | 'RATE_LIMITED'
  | 'PRODUCT_NOT_FOUND'
  | 'PATH_TOKEN_REQUIRED'
  | 'PATH_TOKEN_INVALID'
  | 'IDEMPOTENCY_KEY_REUSED';

/** `replayed`: the answer comes from the buyer's key, and `status` is the order's status now. */
export type PlaceOrderResult =
  | Readonly<{ ok: true; orderId: string; status: OrderStatus; replayed?: true }>
  | Readonly<{
      ok: false;
      code: OrderRejectionCode;
      detail: string;
      retryAfterMs?: number;
      replayed?: true;
    }>;

const rejected = (code: OrderRejectionCode, detail: string, retryAfterMs?: number): PlaceOrderResult =>
  retryAfterMs === undefined ? { ok: false, code, detail } : { ok: false, code, detail, retryAfterMs };

const ALLOWED_HERE: Promise<RateDecision> = Promise.resolve({ allowed: true });
const NO_TOKEN_ASKED: Promise<SalePathRedemption | null> = Promise.resolve(null);
const NO_KEY: Promise<KeyClaim | null> = Promise.resolve(null);

const KEY_REUSED = rejected(
  'IDEMPOTENCY_KEY_REUSED',
  'this Idempotency-Key was used for another order request: a new request takes a new key',
);
const soldOutRejection = (productId: number) => rejected('SOLD_OUT', `product ${productId} is sold out`);

/** What a request asks, whatever its key: a repeat with another body is refused. */
const fingerprint = (cmd: PlaceOrderCommand): string => `${cmd.productId}:${cmd.quantity}`;

const isPathRefusal = (refusal: PlaceOrderResult | Error | null): refusal is PlaceOrderResult =>
  refusal !== null && !(refusal instanceof Error) && !refusal.ok && refusal.code.startsWith('PATH_TOKEN');

/** Past admission: the lock held, and whether the request may only be answered from its key's record. */
type Admitted = Readonly<{ ok: true; lock: LockHandle; replayOnly: PlaceOrderResult | null }>;

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
    const checked = await this.check(cmd);
    if ('ok' in checked) return checked;
    const handle = await this.admit(cmd, checked.requirePathToken);
    if (!handle.ok) return handle.rejection;
    try {
      return await this.reserve(cmd, checked.perUserLimit, handle.replayOnly ?? checked.replayOnly);
    } finally {
      await this.release(handle.lock);
    }
  }

  /**
   * The checks made in process, in order of cost. The sold-out flag first: once a product is gone, its flood
   * costs no Redis call at all. Then the product's terms, kept in process (unknown ids too), and the sale
   * window. A request whose key holds an answer is answered from it although the flag or the window would
   * turn it away now: its first try's answer may never have arrived (the window, unlike the flag, is
   * authoritative, so past it the request is answered from the key alone).
   */
  private async check(
    cmd: PlaceOrderCommand,
  ): Promise<
    | PlaceOrderResult
    | Readonly<{ requirePathToken: boolean; perUserLimit: number; replayOnly: PlaceOrderResult | null }>
  > {
    const { catalog, soldOut, clock } = this.deps;
    assertOrderQuantity(cmd.quantity);
    if (soldOut.isSoldOut(cmd.productId) && !(await this.keyHoldsAnswer(cmd)))
      return soldOutRejection(cmd.productId);
    const terms = await catalog.terms(cmd.productId);
    if (!terms) return rejected('PRODUCT_NOT_FOUND', `product ${cmd.productId} does not exist`);
    const rule = purchaseRejection(terms, cmd.quantity, clock.now());
    const refused = rule ? rejected(rule.code, rule.detail) : null;
    if (refused && !(await this.keyHoldsAnswer(cmd))) return refused;
    if (terms.requirePathToken && cmd.pathToken === undefined)
      return rejected(
        'PATH_TOKEN_REQUIRED',
        `product ${cmd.productId} takes orders with a path token: POST /api/v1/seckill/products/${cmd.productId}/path`,
      );
    return {
      requirePathToken: terms.requirePathToken,
      perUserLimit: terms.perUserLimit,
      replayOnly: refused,
    };
  }

  /**
   * A product marked sold out in process still answers a request whose key holds an answer (its first try's
   * 202 may never have arrived): that request goes on to the gate, which answers it from the key.
   */
  private async keyHoldsAnswer(cmd: PlaceOrderCommand): Promise<boolean> {
    if (cmd.idempotencyKey === undefined) return false;
    return (await this.deps.gate.recall(cmd.productId, cmd.userId, cmd.idempotencyKey)) !== null;
  }

  /**
   * The client address's and the buyer's budgets, the sale path token, the duplicate-request lock and the
   * buyer's key, asked at once: the calls leave for Redis together (one round trip). Over a budget:
   * RATE_LIMITED, and a lock taken meanwhile is given back. A token that is not this buyer's, unknown, used or
   * expired: PATH_TOKEN_INVALID, unless the request repeats a key (its first try used the token up), which
   * is then answered from the key alone. A key used for another request: IDEMPOTENCY_KEY_REUSED. A lock
   * held by another request of the buyer: DUPLICATE_REQUEST, or, for a request with a key, a wait for it. A
   * token is used up by the request that carried it, whatever its answer: the buyer asks for another.
   */
  private async admit(
    cmd: PlaceOrderCommand,
    requirePathToken: boolean,
  ): Promise<Admitted | Readonly<{ ok: false; rejection: PlaceOrderResult }>> {
    const [address, user, path, lock, claim] = await this.ask(cmd, requirePathToken);
    const repeat = claim.status === 'fulfilled' && claim.value === 'SAME';
    const refusal =
      claim.status === 'fulfilled' && claim.value === 'OTHER'
        ? KEY_REUSED
        : this.refusal(address, user, path, lock, claim);
    // a repeat's token was used up by its first try: the repeat may still be answered from the key
    const replayOnly = repeat && isPathRefusal(refusal) ? refusal : null;
    if (refusal && !replayOnly) {
      if (lock.status === 'fulfilled' && lock.value) await this.release(lock.value);
      if (refusal instanceof Error) throw refusal;
      return { ok: false, rejection: refusal };
    }
    const taken = (lock as PromiseFulfilledResult<LockHandle | null>).value;
    const held = taken ?? (cmd.idempotencyKey === undefined ? null : await this.waitForFirstTry(cmd));
    if (!held)
      return {
        ok: false,
        rejection: rejected('DUPLICATE_REQUEST', 'an order for this product is already being placed', 1_000),
      };
    return { ok: true, lock: held, replayOnly };
  }

  private ask(cmd: PlaceOrderCommand, requirePathToken: boolean) {
    const { budgets, salePaths, lock: locks, lockLeaseMs, gate, idempotencyKeyTtlMs } = this.deps;
    const clientAddress = budgets.orderAddress ? cmd.clientAddress?.() : undefined;
    const key = cmd.idempotencyKey;
    return Promise.allSettled([
      budgets.orderAddress && clientAddress !== undefined
        ? budgets.orderAddress.tryConsume(clientAddress)
        : ALLOWED_HERE,
      budgets.orderUser ? budgets.orderUser.tryConsume(cmd.userId) : ALLOWED_HERE,
      requirePathToken && cmd.pathToken !== undefined
        ? salePaths.redeem(cmd.pathToken, cmd.userId, cmd.productId)
        : NO_TOKEN_ASKED,
      locks.tryLock(orderLockKey(cmd.userId, cmd.productId), { waitMs: 0, leaseMs: lockLeaseMs }),
      key === undefined ? NO_KEY : gate.claimKey(cmd.userId, key, fingerprint(cmd), idempotencyKeyTtlMs),
    ] as const);
  }

  /**
   * A request with a key waits for the buyer's lock rather than being turned away: when the holder is the
   * key's first try, the repeat is then answered from the key. Waiting longer than a lease: DUPLICATE_REQUEST.
   */
  private waitForFirstTry(cmd: PlaceOrderCommand): Promise<LockHandle | null> {
    const { lock, lockLeaseMs } = this.deps;
    return lock.tryLock(orderLockKey(cmd.userId, cmd.productId), {
      waitMs: lockLeaseMs,
      leaseMs: lockLeaseMs,
    });
  }

  /** What turns the request away before the lock is looked at: a fault, a budget, then the path token. */
  private refusal(
    address: PromiseSettledResult<RateDecision>,
    user: PromiseSettledResult<RateDecision>,
    path: PromiseSettledResult<SalePathRedemption | null>,
    lock: PromiseSettledResult<LockHandle | null>,
    claim: PromiseSettledResult<KeyClaim | null>,
  ): PlaceOrderResult | Error | null {
    for (const settled of [address, user, path, lock, claim])
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

  /**
   * The gate's answer, then the reservation recorded. A request whose path token was refused but whose key
   * holds an answer (`replayOnly`: a repeat) is answered from the key alone, or refused as it was.
   */
  private async reserve(
    cmd: PlaceOrderCommand,
    perUserLimit: number,
    replayOnly: PlaceOrderResult | null,
  ): Promise<PlaceOrderResult> {
    const { gate, soldOut, ids, idempotencyKeyTtlMs } = this.deps;
    const key = cmd.idempotencyKey;
    const orderId = ids.next();
    let answer: GateAnswer;
    if (replayOnly && key !== undefined) {
      const recorded = await gate.recall(cmd.productId, cmd.userId, key);
      if (!recorded) return replayOnly;
      answer = answerFromKey(recorded, cmd.quantity, 0);
    } else
      answer = await gate.reserve({
        productId: cmd.productId,
        orderId,
        userId: cmd.userId,
        quantity: cmd.quantity,
        perUserLimit,
        idempotency: key === undefined ? undefined : { key, ttlMs: idempotencyKeyTtlMs },
      });
    if (!answer.ok) return this.refused(cmd, perUserLimit, answer);
    if ('replayOf' in answer) return this.replay(cmd, answer.replayOf);
    // a lapsed sold-out mark let this order look at the gate, and the gate had stock: the mark goes
    soldOut.markAvailable(cmd.productId);
    await this.record(cmd, orderId);
    return { ok: true, orderId, status: 'RESERVED' };
  }

  private refused(
    cmd: PlaceOrderCommand,
    perUserLimit: number,
    answer: Exclude<GateAnswer, { ok: true }>,
  ): PlaceOrderResult {
    const replayed = 'replayed' in answer ? ({ replayed: true } as const) : {};
    switch (answer.reason) {
      case 'SOLD_OUT':
        // only an empty gate turns the flood away in process; a large order must not shut out a small one
        if (answer.stockLeft <= 0 && !answer.replayed) this.deps.soldOut.markSoldOut(cmd.productId);
        return { ...soldOutRejection(cmd.productId), ...replayed };
      case 'LIMIT_EXCEEDED':
        return { ...rejected('LIMIT_EXCEEDED', `at most ${perUserLimit} per buyer`), ...replayed };
      case 'KEY_REUSED':
        return KEY_REUSED;
      case 'NOT_LOADED':
        throw new InfrastructureUnavailable(
          'stock gate',
          `product ${cmd.productId} is not loaded in the gate`,
        );
    }
  }

  /**
   * A repeat of a request that reserved: the same order. Its first try may have died between the gate and
   * the commit, so an order not in MySQL is recorded now, with the unit the gate already holds for it (the
   * decider makes nothing of an order that exists). The gate is never given back here: the unit is the first
   * try's.
   */
  private async replay(cmd: PlaceOrderCommand, orderId: string): Promise<PlaceOrderResult> {
    this.deps.metrics.count('idempotent_replays');
    const existing = await this.deps.orders.get(orderId);
    if (existing) return { ok: true, orderId, status: existing.status, replayed: true };
    this.deps.metrics.count('idempotent_recoveries');
    try {
      await this.journal.submit({ ...this.reservation(cmd, orderId), isNew: false });
    } catch (error) {
      if (error instanceof InfrastructureUnavailable) throw error;
      throw new InfrastructureUnavailable('database', 'the reservation could not be recorded', {
        cause: error,
      });
    }
    return { ok: true, orderId, status: 'RESERVED', replayed: true };
  }

  private async record(cmd: PlaceOrderCommand, orderId: string): Promise<void> {
    try {
      await this.journal.submit(this.reservation(cmd, orderId));
    } catch (error) {
      await this.restoreGate(cmd, orderId);
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

  /** The gate given back, and the buyer's key forgotten: the reservation was never recorded. */
  private async restoreGate(cmd: PlaceOrderCommand, orderId: string): Promise<void> {
    const { productId, userId, idempotencyKey: key } = cmd;
    try {
      await this.deps.gate.restore(productId, orderId, key === undefined ? undefined : { userId, key });
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
