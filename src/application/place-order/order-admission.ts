import { assertOrderQuantity, type ProductTerms, purchaseRejection } from '../../domain/index.js';
import type { ProductCatalog } from '../product-catalog.js';
import {
  type Clock,
  type GateAnswer,
  type GateBudget,
  type GateReservation,
  InfrastructureUnavailable,
  type Logger,
  type RateLimiter,
  type SoldOutFlags,
  type StockGate,
} from '../ports/index.js';
import {
  KEY_REUSED,
  type OrderRejection,
  type PlaceOrderCommand,
  rejected,
  soldOutRejection,
} from './answers.js';
import { CallerBlocks } from './caller-blocks.js';
import { SoldOutBuyers } from './sold-out-buyers.js';

/** A budget's size: `points` order attempts per `windowMs`. */
export type BudgetSize = Readonly<{ points: number; windowMs: number }>;

/** The order route's budgets, spent by the gate on the product ordered (null: off). */
export type OrderBudgets = Readonly<{ buyer: BudgetSize | null; address: BudgetSize | null }>;

export type OrderAdmissionDeps = Readonly<{
  catalog: ProductCatalog;
  soldOut: SoldOutFlags;
  gate: StockGate;
  clock: Clock;
  logger: Logger;
  budgets: OrderBudgets;
  /**
   * what a buyer spends to have a product looked up that this process does not keep (the reads' budget, under
   * the key the read routes use): an unknown id costs a MySQL query, so a flood of them is refused first
   */
  lookups?: RateLimiter | null | undefined;
  lockLeaseMs: number;
  idempotencyKeyTtlMs: number;
  /** the most live keys one buyer holds on one product (0 or absent: no bound) */
  idempotencyKeysMax?: number | undefined;
  /** the most reservations of a sold-out product whose buyers are kept in process */
  soldOutBuyersMax?: number | undefined;
}>;

/** Past the in-process checks: what the gate is asked with. */
export type Admitted = Readonly<{
  perUserLimit: number;
  requirePathToken: boolean;
  /** the client address, when the per-address budget is on */
  address: string | undefined;
  /** the refusal the sale's terms give now: only the buyer's key may still answer (a repeat) */
  replayOnly: OrderRejection | null;
}>;

type Refused = Exclude<GateAnswer, { ok: true }>;

/** Another buyer's token is refused in the same words as an unknown one: a refusal does not say a token exists. */
const PATH_TOKEN_REFUSED =
  'the path token is unknown, used or expired: ask POST /api/v1/seckill/products/{id}/path for a new one';
const TOO_MANY = {
  address: 'too many order requests from this address, slow down',
  buyer: 'too many requests, slow down',
  lookups:
    'too many reads, slow down: products this service does not keep at hand are read from its database',
};
const notFound = (productId: number): OrderRejection =>
  rejected('PRODUCT_NOT_FOUND', `product ${productId} does not exist`);

/** How often a request with a key looks again at a lock held by another request of its buyer. */
const LOCK_POLL_MS = [5, 10, 20, 50, 100] as const;

const callerOf = (scope: GateBudget['scope'], productId: number, id: string): string =>
  `${productId}|${scope}|${id}`;

/**
 * Who gets to the stock, cheapest refusal first. In process, with no I/O: the quantity, the sold-out mark (the
 * flood after the last unit), a caller blocked for its budget, the product's terms (a cache) and the sale
 * window. Then one atomic gate call: the budgets, the buyer's lock, the buyer's key, the path token, the limit
 * and the stock. A request with a key whose buyer's lock is held waits for it (its first try may hold it) and is
 * then answered from the key.
 */
export class OrderAdmission {
  private readonly blocks: CallerBlocks;
  private readonly soldOutBuyers: SoldOutBuyers;

  constructor(private readonly deps: OrderAdmissionDeps) {
    this.blocks = new CallerBlocks(undefined, () => Date.parse(deps.clock.now()));
    this.soldOutBuyers = new SoldOutBuyers(deps.gate, deps.logger, deps.soldOutBuyersMax);
  }

  async check(cmd: PlaceOrderCommand): Promise<Admitted | OrderRejection> {
    const { productId, userId } = cmd;
    assertOrderQuantity(cmd.quantity);
    // a request with a key from a buyer who reserved may repeat a 202 that never arrived: the gate answers it
    if (
      this.deps.soldOut.isSoldOut(productId) &&
      !(cmd.idempotencyKey !== undefined && this.soldOutBuyers.mayHold(productId, userId))
    )
      return soldOutRejection(productId);
    const address = this.deps.budgets.address ? cmd.clientAddress?.() : undefined;
    const blocked = this.blockedFor(productId, userId, address);
    if (blocked) return blocked;
    const kept = this.deps.catalog.cached(productId);
    const terms = kept === undefined ? await this.lookUp(productId, userId) : (kept ?? notFound(productId));
    if ('ok' in terms) return terms;
    const rule = purchaseRejection(terms, cmd.quantity, this.deps.clock.now());
    const refused = rule ? rejected(rule.code, rule.detail) : null;
    // past the window, a repeat is answered from its key alone; the window is authoritative for a new request
    if (refused && cmd.idempotencyKey === undefined) return refused;
    if (terms.requirePathToken && cmd.pathToken === undefined)
      return rejected(
        'PATH_TOKEN_REQUIRED',
        `product ${productId} takes orders with a path token: POST /api/v1/seckill/products/${productId}/path`,
      );
    return {
      perUserLimit: terms.perUserLimit,
      requirePathToken: terms.requirePathToken,
      address,
      replayOnly: refused,
    };
  }

  /** The gate's one atomic step for this order attempt (`orderId` also owns the buyer's lock). */
  async attempt(cmd: PlaceOrderCommand, admitted: Admitted, orderId: string): Promise<GateAnswer> {
    const { idempotencyKey: key } = cmd;
    const reservation: GateReservation = {
      productId: cmd.productId,
      orderId,
      userId: cmd.userId,
      quantity: cmd.quantity,
      perUserLimit: admitted.perUserLimit,
      idempotency:
        key === undefined
          ? undefined
          : { key, ttlMs: this.deps.idempotencyKeyTtlMs, maxLive: this.deps.idempotencyKeysMax },
      lock: { owner: orderId, leaseMs: this.deps.lockLeaseMs },
      budgets: this.budgetsOf(cmd, admitted.address),
      pathToken: admitted.requirePathToken ? cmd.pathToken : undefined,
      replayOnly: admitted.replayOnly !== null,
    };
    const answer = await this.deps.gate.reserve(reservation);
    if (answer.ok || answer.reason !== 'LOCKED' || key === undefined) return answer;
    // the budgets were spent by the first ask
    return this.waitForLock({ ...reservation, budgets: undefined });
  }

  /** What a refusal of the gate answers; a product missing from the gate is an infrastructure fault. */
  refusal(cmd: PlaceOrderCommand, admitted: Admitted, answer: Refused): OrderRejection {
    const { productId } = cmd;
    const replayed = 'replayed' in answer ? ({ replayed: true } as const) : {};
    switch (answer.reason) {
      case 'SOLD_OUT':
        // only an empty gate turns the flood away in process; a large order must not shut out a small one
        if (answer.stockLeft <= 0 && !answer.replayed) this.markSoldOut(productId);
        return { ...soldOutRejection(productId), ...replayed };
      case 'LIMIT_EXCEEDED':
        return { ...rejected('LIMIT_EXCEEDED', `at most ${admitted.perUserLimit} per buyer`), ...replayed };
      case 'KEY_REUSED':
        return KEY_REUSED;
      case 'NOT_RECORDED':
        // only a repeat could have been answered: the sale's terms refuse the request as it is
        return admitted.replayOnly ?? soldOutRejection(productId);
      case 'NOT_LOADED':
        throw new InfrastructureUnavailable('stock gate', `product ${productId} is not loaded in the gate`);
      default:
        return this.turnedAway(cmd, admitted, answer);
    }
  }

  /** The refusals that come before the stock: a budget, the buyer's lock, the path token, the buyer's keys. */
  private turnedAway(
    cmd: PlaceOrderCommand,
    admitted: Admitted,
    answer: Extract<Refused, { reason: 'RATE_LIMITED' | 'LOCKED' | 'PATH_TOKEN_INVALID' | 'KEYS_EXHAUSTED' }>,
  ): OrderRejection {
    switch (answer.reason) {
      case 'RATE_LIMITED':
        this.blocks.block(
          callerOf(
            answer.scope,
            cmd.productId,
            answer.scope === 'buyer' ? cmd.userId : (admitted.address ?? ''),
          ),
          answer.retryAfterMs,
        );
        return rejected('RATE_LIMITED', TOO_MANY[answer.scope], answer.retryAfterMs);
      case 'LOCKED':
        return rejected(
          'DUPLICATE_REQUEST',
          'an order for this product is already being placed',
          answer.retryAfterMs,
        );
      case 'PATH_TOKEN_INVALID':
        return rejected('PATH_TOKEN_INVALID', PATH_TOKEN_REFUSED);
      case 'KEYS_EXHAUSTED':
        return rejected(
          'RATE_LIMITED',
          `too many Idempotency-Keys: at most ${this.deps.idempotencyKeysMax} of a buyer's are kept for a product at once; repeat a request with its own key, or wait until the first of them ends`,
          answer.retryAfterMs,
        );
    }
  }

  /** The gate reserved a unit for the buyer: the product is not sold out, and the buyer is one of its buyers. */
  reserved(cmd: PlaceOrderCommand): void {
    // a lapsed sold-out mark let this order look at the gate, and the gate had stock: the mark goes
    this.deps.soldOut.markAvailable(cmd.productId);
    this.soldOutBuyers.reserved(cmd.productId, cmd.userId);
  }

  /** Frees the buyer's lock taken by an `ok` answer: the gate sends it after this turn's answers. */
  release(cmd: PlaceOrderCommand, orderId: string): void {
    this.deps.gate.unlock(cmd.productId, cmd.userId, orderId).catch((error: unknown) => {
      this.deps.logger.warn(
        { productId: cmd.productId, userId: cmd.userId, err: String(error) },
        'unlock failed; the lock ends with its lease',
      );
    });
  }

  /** A gate that answered sold out: the flood is turned away here, and who reserved is asked again. */
  private markSoldOut(productId: number): void {
    this.deps.soldOut.markSoldOut(productId);
    this.soldOutBuyers.refresh(productId);
  }

  /** A product this process does not keep, looked up once the buyer has spent a read on it. */
  private async lookUp(productId: number, userId: string): Promise<ProductTerms | OrderRejection> {
    const { lookups } = this.deps;
    if (lookups) {
      const caller = `lookups|buyer|${userId}`;
      const left = this.blocks.blockedFor(caller);
      if (left > 0) return rejected('RATE_LIMITED', TOO_MANY.lookups, left);
      const decision = await lookups.tryConsume(`user:${userId}`);
      if (!decision.allowed) {
        this.blocks.block(caller, decision.retryAfterMs);
        return rejected('RATE_LIMITED', TOO_MANY.lookups, decision.retryAfterMs);
      }
    }
    return (await this.deps.catalog.terms(productId)) ?? notFound(productId);
  }

  private blockedFor(productId: number, userId: string, address: string | undefined): OrderRejection | null {
    const byAddress =
      address === undefined ? 0 : this.blocks.blockedFor(callerOf('address', productId, address));
    if (byAddress > 0) return rejected('RATE_LIMITED', TOO_MANY.address, byAddress);
    const byBuyer = this.deps.budgets.buyer
      ? this.blocks.blockedFor(callerOf('buyer', productId, userId))
      : 0;
    return byBuyer > 0 ? rejected('RATE_LIMITED', TOO_MANY.buyer, byBuyer) : null;
  }

  private budgetsOf(cmd: PlaceOrderCommand, address: string | undefined): GateBudget[] {
    const { buyer, address: byAddress } = this.deps.budgets;
    const budgets: GateBudget[] = [];
    if (byAddress && address !== undefined) budgets.push({ scope: 'address', id: address, ...byAddress });
    if (buyer) budgets.push({ scope: 'buyer', id: cmd.userId, ...buyer });
    return budgets;
  }

  /**
   * Asks the gate again until the lock is free or a lease has passed (then DUPLICATE_REQUEST). The holder is
   * most likely the key's first try, still recording its reservation: once it has answered, so does the key.
   */
  private async waitForLock(reservation: GateReservation): Promise<GateAnswer> {
    const deadline = Date.now() + this.deps.lockLeaseMs;
    for (let round = 0; ; round += 1) {
      const pause = LOCK_POLL_MS[Math.min(round, LOCK_POLL_MS.length - 1)]!;
      if (Date.now() + pause > deadline) return { ok: false, reason: 'LOCKED', retryAfterMs: 1_000 };
      await new Promise((resolve) => setTimeout(resolve, pause));
      const answer = await this.deps.gate.reserve(reservation);
      if (answer.ok || answer.reason !== 'LOCKED') return answer;
    }
  }
}
