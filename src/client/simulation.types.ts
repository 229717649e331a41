import type { TokenPolicy } from '../adapters/http/tokens.js';

/** What `seckill simulate` is asked to do, and what it reports. */
export type SimulationOptions = Readonly<{
  url: string;
  secret: string;
  /** the service's token policy (its iss, aud and longest lifetime), so that its tokens are accepted */
  tokenPolicy?: Partial<TokenPolicy>;
  buyers: number;
  stock: number;
  perUserLimit: number;
  clicks: number;
  connections: number;
  /** list the product with `requirePathToken`, and ask each buyer's sale path token before each order (default true) */
  pathToken?: boolean;
  json?: boolean;
  /** print nothing (no progress, no report); the report is still returned */
  quiet?: boolean;
  /** the flood is stopped after this long whatever happens (default 120 s) */
  floodTimeoutMs?: number;
  /** how long to wait for the pipeline to decide every accepted order (default 60 s) */
  settleTimeoutMs?: number;
  /** order event streams watched at once (default 256) */
  watchConcurrency?: number;
  /** parallel order polls, for orders whose stream gave out (default 16) */
  pollConcurrency?: number;
}>;

export type SimulationReport = Readonly<{
  runId: string;
  url: string;
  productId: number;
  buyers: number;
  stock: number;
  perUserLimit: number;
  /** each order carried a sale path token asked for just before it */
  pathToken: boolean;
  clicks: number;
  connections: number;
  requests: Readonly<{
    planned: number;
    answered: number;
    /** sent but never answered (timeouts, broken connections), retries included */
    unanswered: number;
    /** clicks unanswered or answered 503, sent again with the same Idempotency-Key (up to 3 times each) */
    retried: Readonly<{ sent: number; answered: number }>;
    durationSeconds: number;
    perSecond: number;
    latencyMs: Readonly<{ p50: number; p99: number; max: number; average: number }>;
  }>;
  /** every answer by code: ACCEPTED, SOLD_OUT, LIMIT_EXCEEDED, …, or `HTTP <status>` when it carries no known code */
  answers: Readonly<Record<string, number>>;
  accepted: number;
  rejected: Readonly<Record<string, number>>;
  orders: Readonly<{
    committed: number;
    paid: number;
    /** released orders by reason */
    released: Readonly<Record<string, number>>;
    /** still RESERVED (or unreadable) when the settle deadline passed */
    undecided: number;
    settleSeconds: number;
  }>;
  /** units sold: COMMITTED or PAID orders */
  sold: number;
  oversold: number;
  /** the gate's view after the run (GET /api/v1/products/:id) */
  stockLeft: number | null;
  maxUnitsPerBuyer: number;
  buyersOverLimit: number;
  audit: Readonly<{
    ok: boolean;
    violations: number;
    details: ReadonlyArray<Readonly<{ kind: string; detail: string }>>;
  }>;
  /** the reasons the run failed; empty when it passed */
  failures: readonly string[];
  ok: boolean;
}>;

/** A simulated buyer, by index: its user id and its bearer token. */
export type Buyer = Readonly<{ userId: string; token: string }>;
/** An order the service accepted (202), and the buyer who placed it. */
export type Accepted = Readonly<{ orderId: string; buyer: number }>;
/** An accepted order as the service decided it. */
export type Decided = Readonly<{ buyer: number; quantity: number; status: string; reason?: string }>;

export const bump = (counts: Record<string, number>, key: string, by = 1): void => {
  counts[key] = (counts[key] ?? 0) + by;
};
