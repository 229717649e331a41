import { createRequire } from 'node:module';
import { JwtTokens } from '../adapters/http/tokens.js';

/**
 * `seckill simulate`: lists a fresh product on a running service, floods it with repeat clicks from many
 * buyers (driven by autocannon), waits until the pipeline has decided every accepted order, and reports what
 * happened: throughput, latency, answers by code, units sold, oversell, per-buyer holdings and the audit.
 */
export type SimulationOptions = Readonly<{
  url: string;
  secret: string;
  buyers: number;
  stock: number;
  perUserLimit: number;
  clicks: number;
  connections: number;
  json?: boolean;
  /** print nothing (no progress, no report); the report is still returned */
  quiet?: boolean;
  /** the flood is stopped after this long whatever happens (default 120 s) */
  floodTimeoutMs?: number;
  /** how long to wait for the pipeline to decide every accepted order (default 60 s) */
  settleTimeoutMs?: number;
  /** parallel order polls (default 16) */
  pollConcurrency?: number;
}>;

export type SimulationReport = Readonly<{
  runId: string;
  url: string;
  productId: number;
  buyers: number;
  stock: number;
  perUserLimit: number;
  clicks: number;
  connections: number;
  requests: Readonly<{
    planned: number;
    answered: number;
    /** sent but never answered (timeouts, broken connections) */
    unanswered: number;
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

// ---- autocannon (v9 ships no type declarations: the part used here, typed locally) ----

type FloodContext = { job?: Job };
type CannonRequest = {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: CannonRequest, context: FloodContext) => CannonRequest | null;
  onResponse?: (
    status: number,
    body: string,
    context: FloodContext,
    headers: Record<string, unknown>,
  ) => void;
};
type CannonOptions = {
  url: string;
  connections: number;
  amount: number;
  timeout: number;
  sampleInt: number;
  requests: CannonRequest[];
};
type CannonHistogram = Readonly<{ average: number; max: number; total: number; p50: number; p99: number }>;
type CannonResult = Readonly<{
  duration: number;
  errors: number;
  timeouts: number;
  latency: CannonHistogram;
  requests: CannonHistogram & Readonly<{ sent: number }>;
}>;
type CannonInstance = { stop(): void };
type Autocannon = (
  options: CannonOptions,
  done: (error: Error | null, result: CannonResult) => void,
) => CannonInstance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// ---- plumbing ----

type Job = Readonly<{ buyer: number }>;
type Buyer = Readonly<{ userId: string; token: string }>;
type Accepted = Readonly<{ orderId: string; buyer: number }>;
type Decided = Readonly<{ buyer: number; quantity: number; status: string; reason?: string }>;
type Answer = Readonly<{ status: number; body: unknown }>;

const KNOWN_CODES = new Set([
  'SOLD_OUT',
  'LIMIT_EXCEEDED',
  'SALE_NOT_ACTIVE',
  'DUPLICATE_REQUEST',
  'RATE_LIMITED',
  'UNAVAILABLE',
]);
const TOKEN_TTL_SECONDS = 3600;
const CALL_TIMEOUT_MS = 10_000;

export class ServiceUnreachable extends Error {
  constructor(url: string, cause: unknown) {
    super(
      `no seckill service answers at ${url} (${describeCause(cause)}); start it with \`npx seckill all\` (or npm start), or pass --url`,
    );
    this.name = 'ServiceUnreachable';
  }
}

const describeCause = (error: unknown): string => {
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
};

const field = (body: unknown, name: string): unknown =>
  typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;

const parseJson = (text: string): unknown => {
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return text;
  }
};

const call = async (
  base: string,
  path: string,
  init: { method?: string; token?: string; body?: unknown } = {},
) => {
  const headers: Record<string, string> = {};
  if (init.token) headers['authorization'] = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ServiceUnreachable(base, error);
  }
  return { status: response.status, body: parseJson(await response.text()) } satisfies Answer;
};

const explain = (what: string, answer: Answer): Error => {
  const code = field(answer.body, 'code');
  const detail = field(answer.body, 'detail');
  const hint =
    answer.status === 401 || answer.status === 403
      ? ' — is SECKILL_JWT_SECRET the same here as in the service?'
      : '';
  const text = typeof detail === 'string' ? detail : JSON.stringify(answer.body);
  return new Error(
    `${what} answered ${answer.status}${typeof code === 'string' ? ` ${code}` : ''}: ${text}${hint}`,
  );
};

const shuffle = <T>(items: T[]): T[] => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
};

/** Runs `work` over `items` with at most `concurrency` in flight. */
const eachLimited = async <T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) => {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane));
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const bump = (counts: Record<string, number>, key: string, by = 1) => {
  counts[key] = (counts[key] ?? 0) + by;
};

const codeOf = (status: number, body: unknown): string => {
  if (status === 202) return 'ACCEPTED';
  const code = field(body, 'code');
  if (typeof code === 'string' && KNOWN_CODES.has(code)) return code;
  return `HTTP ${status}${typeof code === 'string' ? ` ${code}` : ''}`;
};

// ---- the steps ----

const listProduct = async (base: string, adminToken: string, options: SimulationOptions, runId: string) => {
  const answer = await call(base, '/api/v1/admin/products', {
    method: 'POST',
    token: adminToken,
    body: {
      name: `simulate ${runId}`,
      stock: options.stock,
      perUserLimit: options.perUserLimit,
      maxPerOrder: 1,
    },
  });
  const productId = field(answer.body, 'productId');
  if (answer.status !== 201 || typeof productId !== 'number') throw explain('listing the product', answer);
  return productId;
};

type Flood = Readonly<{
  result: CannonResult;
  answers: Record<string, number>;
  accepted: Accepted[];
  answered: number;
}>;

const flood = async (
  target: Readonly<{ url: string; pathPrefix: string; productId: number }>,
  buyers: readonly Buyer[],
  options: SimulationOptions,
): Promise<Flood> => {
  const jobs = shuffle(
    buyers.flatMap((_, buyer) => Array.from({ length: options.clicks }, () => ({ buyer }))),
  );
  const body = JSON.stringify({ productId: target.productId, quantity: 1 });
  const answers: Record<string, number> = {};
  const accepted: Accepted[] = [];
  let cursor = 0;
  let answered = 0;

  const request: CannonRequest = {
    method: 'POST',
    path: `${target.pathPrefix}/api/v1/seckill/orders`,
    // one call per request sent: autocannon sends exactly `amount` requests, so the cursor never runs past the jobs
    setupRequest: (req, context) => {
      const job = jobs[cursor++ % jobs.length] as Job;
      context.job = job;
      const token = (buyers[job.buyer] as Buyer).token;
      return {
        ...req,
        headers: { ...req.headers, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      };
    },
    // one connection has one request in flight (no pipelining), so the context still holds its job
    onResponse: (status, text, context) => {
      answered++;
      const parsed = parseJson(text);
      const code = codeOf(status, parsed);
      bump(answers, code);
      const orderId = field(parsed, 'orderId');
      if (code === 'ACCEPTED' && typeof orderId === 'string' && context.job)
        accepted.push({ orderId, buyer: context.job.buyer });
    },
  };

  const timeoutMs = options.floodTimeoutMs ?? 120_000;
  let instance: CannonInstance | undefined;
  let timer: NodeJS.Timeout | undefined;
  const run = new Promise<CannonResult>((resolve, reject) => {
    instance = autocannon(
      {
        url: target.url,
        connections: Math.max(1, Math.min(options.connections, jobs.length)),
        amount: jobs.length,
        timeout: 10,
        sampleInt: 100,
        requests: [request],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // ask autocannon to stop and give back what it has; give up on it if even that does not come
      instance?.stop();
      timer = setTimeout(() => reject(new Error(`the flood did not stop within ${timeoutMs} ms`)), 5_000);
    }, timeoutMs);
  });
  try {
    const result = await Promise.race([run, deadline]);
    return { result, answers, accepted, answered };
  } finally {
    clearTimeout(timer);
  }
};

type Settled = Readonly<{ decided: Decided[]; undecided: number; seconds: number }>;

/** Polls every accepted order (with its buyer's token) until none is RESERVED or the deadline passes. */
const settle = async (
  base: string,
  accepted: readonly Accepted[],
  buyers: readonly Buyer[],
  options: SimulationOptions,
): Promise<Settled> => {
  const started = Date.now();
  const deadline = started + (options.settleTimeoutMs ?? 60_000);
  const decided: Decided[] = [];
  let pending = [...accepted];
  while (pending.length > 0) {
    const stillPending: Accepted[] = [];
    await eachLimited(pending, options.pollConcurrency ?? 16, async (order) => {
      const view = await readOrder(base, order, buyers).catch(() => null);
      if (view && view.status !== 'RESERVED') decided.push(view);
      else stillPending.push(order);
    });
    pending = stillPending;
    if (pending.length === 0 || Date.now() >= deadline) break;
    await sleep(200);
  }
  return { decided, undecided: pending.length, seconds: (Date.now() - started) / 1000 };
};

const readOrder = async (
  base: string,
  order: Accepted,
  buyers: readonly Buyer[],
): Promise<Decided | null> => {
  const token = (buyers[order.buyer] as Buyer).token;
  const answer = await call(base, `/api/v1/orders/${encodeURIComponent(order.orderId)}`, { token });
  const status = field(answer.body, 'status');
  if (answer.status !== 200 || typeof status !== 'string') return null;
  const quantity = field(answer.body, 'quantity');
  const reason = field(answer.body, 'reason');
  return {
    buyer: order.buyer,
    quantity: typeof quantity === 'number' ? quantity : 1,
    status,
    ...(typeof reason === 'string' ? { reason } : {}),
  };
};

type AuditSummary = SimulationReport['audit'];

/**
 * The audit replays the whole event store. A gate restore may still be in flight just after the last order
 * is decided, so a failing audit is asked again for a few seconds; an oversell in history never goes away.
 */
const auditOf = async (base: string, adminToken: string): Promise<AuditSummary> => {
  const until = Date.now() + 5_000;
  for (;;) {
    const answer = await call(base, '/api/v1/admin/audit', { token: adminToken });
    const ok = field(answer.body, 'ok');
    const violations = field(answer.body, 'violations');
    if (answer.status !== 200 || typeof ok !== 'boolean' || !Array.isArray(violations))
      throw explain('the audit endpoint', answer);
    if (ok || Date.now() >= until) {
      const details = (violations as unknown[]).slice(0, 20).map((v) => ({
        kind: String(field(v, 'kind')),
        detail: String(field(v, 'detail')),
      }));
      return { ok, violations: violations.length, details };
    }
    await sleep(500);
  }
};

const stockLeftOf = async (base: string, productId: number): Promise<number | null> => {
  const answer = await call(base, `/api/v1/products/${productId}`);
  const stockLeft = field(answer.body, 'stockLeft');
  return answer.status === 200 && typeof stockLeft === 'number' ? stockLeft : null;
};

const holdings = (decided: readonly Decided[], limit: number) => {
  const units = new Map<number, number>();
  const released: Record<string, number> = {};
  let committed = 0;
  let paid = 0;
  for (const order of decided) {
    if (order.status === 'COMMITTED' || order.status === 'PAID') {
      units.set(order.buyer, (units.get(order.buyer) ?? 0) + order.quantity);
      if (order.status === 'PAID') paid += order.quantity;
      else committed += order.quantity;
    } else bump(released, order.reason ?? order.status);
  }
  const perBuyer = [...units.values()];
  return {
    committed,
    paid,
    released,
    maxUnitsPerBuyer: perBuyer.reduce((max, n) => Math.max(max, n), 0),
    buyersOverLimit: perBuyer.filter((n) => n > limit).length,
  };
};

const failuresOf = (r: Omit<SimulationReport, 'failures' | 'ok'>): string[] => {
  const failures: string[] = [];
  if (r.oversold > 0) failures.push(`oversold by ${r.oversold} unit(s)`);
  if (r.buyersOverLimit > 0) failures.push(`${r.buyersOverLimit} buyer(s) hold more than ${r.perUserLimit}`);
  if (!r.audit.ok) failures.push(`the audit found ${r.audit.violations} violation(s)`);
  if (r.orders.undecided > 0) failures.push(`${r.orders.undecided} accepted order(s) still undecided`);
  // an unanswered request may still have reserved stock that this count never sees (the audit does)
  if (r.requests.unanswered > 0)
    failures.push(`${r.requests.unanswered} request(s) got no answer, so the sold count may be incomplete`);
  return failures;
};

const splitUrl = (url: string) => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  const pathPrefix = parsed.pathname.replace(/\/+$/, '');
  return { base: `${parsed.origin}${pathPrefix}`, origin: parsed.origin, pathPrefix };
};

export const runSimulation = async (options: SimulationOptions): Promise<SimulationReport> => {
  const progress = (line: string) => {
    if (!options.quiet) process.stderr.write(`${line}\n`);
  };
  const { base, origin, pathPrefix } = splitUrl(options.url);
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const tokens = new JwtTokens(options.secret);
  const adminToken = await tokens.sign({ userId: 'simulate-admin', role: 'admin' }, TOKEN_TTL_SECONDS);

  const productId = await listProduct(base, adminToken, options, runId);
  progress(`simulate ${runId}: product ${productId} listed with stock ${options.stock} at ${base}`);
  const buyers: Buyer[] = await Promise.all(
    Array.from({ length: options.buyers }, async (_, i) => {
      const userId = `sim-${runId}-${i}`;
      return { userId, token: await tokens.sign({ userId, role: 'user' }, TOKEN_TTL_SECONDS) };
    }),
  );

  const planned = options.buyers * options.clicks;
  progress(`simulate ${runId}: ${options.buyers} buyers × ${options.clicks} clicks = ${planned} requests…`);
  const f = await flood({ url: origin, pathPrefix, productId }, buyers, options);
  progress(`simulate ${runId}: ${f.accepted.length} accepted; waiting for the pipeline to decide them…`);
  const settled = await settle(base, f.accepted, buyers, options);
  const held = holdings(settled.decided, options.perUserLimit);
  const [stockLeft, audit] = await Promise.all([stockLeftOf(base, productId), auditOf(base, adminToken)]);

  const sold = held.committed + held.paid;
  const { ACCEPTED: _accepted, ...rejected } = f.answers;
  const seconds = f.result.duration;
  const body: Omit<SimulationReport, 'failures' | 'ok'> = {
    runId,
    url: base,
    productId,
    buyers: options.buyers,
    stock: options.stock,
    perUserLimit: options.perUserLimit,
    clicks: options.clicks,
    connections: Math.min(options.connections, planned),
    requests: {
      planned,
      answered: f.answered,
      unanswered: planned - f.answered,
      durationSeconds: seconds,
      perSecond: seconds > 0 ? Math.round(f.result.requests.total / seconds) : 0,
      latencyMs: {
        p50: f.result.latency.p50,
        p99: f.result.latency.p99,
        max: f.result.latency.max,
        average: f.result.latency.average,
      },
    },
    answers: f.answers,
    accepted: f.accepted.length,
    rejected,
    orders: {
      committed: held.committed,
      paid: held.paid,
      released: held.released,
      undecided: settled.undecided,
      settleSeconds: settled.seconds,
    },
    sold,
    oversold: Math.max(0, sold - options.stock),
    stockLeft,
    maxUnitsPerBuyer: held.maxUnitsPerBuyer,
    buyersOverLimit: held.buyersOverLimit,
    audit,
  };
  const failures = failuresOf(body);
  const report: SimulationReport = { ...body, failures, ok: failures.length === 0 };
  if (!options.quiet)
    process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : render(report));
  return report;
};

// ---- the table ----

const counts = (record: Readonly<Record<string, number>>): string => {
  const entries = Object.entries(record).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
};

const render = (r: SimulationReport): string => {
  const q = r.requests;
  const rows: Array<[string, string]> = [
    ['run', `${r.runId} against ${r.url}`],
    ['product', `${r.productId}: stock ${r.stock}, at most ${r.perUserLimit} per buyer, 1 per order`],
    [
      'load',
      `${r.buyers} buyers × ${r.clicks} clicks = ${q.planned} requests on ${r.connections} connections`,
    ],
    [
      'answered',
      `${q.answered} (${q.unanswered} unanswered) in ${q.durationSeconds.toFixed(2)} s → ${q.perSecond} req/s`,
    ],
    ['latency', `p50 ${q.latencyMs.p50} ms, p99 ${q.latencyMs.p99} ms, max ${q.latencyMs.max} ms`],
    ['accepted', String(r.accepted)],
    ['rejected', counts(r.rejected)],
    ['sold', `${r.sold} (${r.orders.committed} committed, ${r.orders.paid} paid)`],
    ['released', counts(r.orders.released)],
    ['undecided', `${r.orders.undecided} (pipeline settled in ${r.orders.settleSeconds.toFixed(2)} s)`],
    ['stock left', r.stockLeft === null ? 'unknown' : String(r.stockLeft)],
    ['OVERSOLD', String(r.oversold)],
    [
      'per buyer',
      `max ${r.maxUnitsPerBuyer} unit(s) held (limit ${r.perUserLimit}), ${r.buyersOverLimit} over`,
    ],
    ['audit', r.audit.ok ? 'ok, 0 violations' : `NOT ok, ${r.audit.violations} violation(s)`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`);
  for (const v of r.audit.details) lines.push(`  ${''.padEnd(width)}  ${v.kind}: ${v.detail}`);
  lines.push(r.ok ? 'simulate: PASS' : `simulate: FAIL — ${r.failures.join('; ')}`);
  return `\nflash-sale simulation\n${lines.join('\n')}\n`;
};
