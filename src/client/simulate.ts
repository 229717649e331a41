import { JwtTokens } from '../adapters/http/tokens.js';
import { flood } from './flood.js';
import { failuresOf, holdings, render } from './report.js';
import { call, explain, field } from './service-calls.js';
import { auditOf, settle, stockLeftOf } from './settle.js';
import type { Buyer, SimulationOptions, SimulationReport } from './simulation.types.js';

export type { SimulationOptions, SimulationReport } from './simulation.types.js';
export { ServiceUnreachable } from './service-calls.js';

/**
 * `seckill simulate`: lists a fresh product on a running service, floods it with repeat clicks from many
 * buyers (driven by autocannon), waits until the pipeline has decided every accepted order, and reports what
 * happened: throughput, latency, answers by code, units sold, oversell, per-buyer holdings and the audit.
 * A client of the HTTP API: it knows the service only by its URL and how its tokens are signed (the secret and
 * the token policy).
 */

const TOKEN_TTL_SECONDS = 3600;

const listProduct = async (base: string, adminToken: string, options: SimulationOptions, runId: string) => {
  const answer = await call(base, '/api/v1/admin/products', {
    method: 'POST',
    token: adminToken,
    body: {
      name: `simulate ${runId}`,
      stock: options.stock,
      perUserLimit: options.perUserLimit,
      maxPerOrder: 1,
      requirePathToken: options.pathToken ?? true,
    },
  });
  const productId = field(answer.body, 'productId');
  if (answer.status !== 201 || typeof productId !== 'number') throw explain('listing the product', answer);
  return productId;
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
  const tokens = new JwtTokens(options.secret, options.tokenPolicy);
  const ttlSeconds = Math.min(TOKEN_TTL_SECONDS, tokens.policy.maxTtlSeconds);
  const adminToken = await tokens.sign({ userId: 'simulate-admin', role: 'admin' }, ttlSeconds);

  const productId = await listProduct(base, adminToken, options, runId);
  progress(`simulate ${runId}: product ${productId} listed with stock ${options.stock} at ${base}`);
  const buyers: Buyer[] = await Promise.all(
    Array.from({ length: options.buyers }, async (_, i) => {
      const userId = `sim-${runId}-${i}`;
      return { userId, token: await tokens.sign({ userId, role: 'user' }, ttlSeconds) };
    }),
  );

  const planned = options.buyers * options.clicks;
  progress(`simulate ${runId}: ${options.buyers} buyers × ${options.clicks} clicks = ${planned} requests…`);
  const pathToken = options.pathToken ?? true;
  const f = await flood({ url: origin, pathPrefix, productId, pathToken }, buyers, options);
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
    pathToken,
    clicks: options.clicks,
    connections: Math.min(options.connections, planned),
    requests: {
      planned,
      answered: f.answered,
      unanswered: planned - f.answered,
      retried: f.retries,
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
