import { bump, type Decided, type SimulationReport } from './simulation.types.js';

/** Units held per buyer (COMMITTED or PAID orders), and the released orders by reason. */
export const holdings = (decided: readonly Decided[], limit: number) => {
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

export const failuresOf = (r: Omit<SimulationReport, 'failures' | 'ok'>): string[] => {
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

// ---- the table ----

const counts = (record: Readonly<Record<string, number>>): string => {
  const entries = Object.entries(record).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
};

/** The report as the table `seckill simulate` prints (without --json). */
export const render = (r: SimulationReport): string => {
  const q = r.requests;
  const rows: Array<[string, string]> = [
    ['run', `${r.runId} against ${r.url}`],
    [
      'product',
      `${r.productId}: stock ${r.stock}, at most ${r.perUserLimit} per buyer, 1 per order${r.pathToken ? ', orders through the sale path' : ''}`,
    ],
    [
      'load',
      `${r.buyers} buyers × ${r.clicks} clicks = ${q.planned} requests on ${r.connections} connections`,
    ],
    [
      'answered',
      `${q.answered} (${q.unanswered} unanswered) in ${q.durationSeconds.toFixed(2)} s → ${q.perSecond} req/s`,
    ],
    [
      'retried',
      `${q.retried.sent} with their Idempotency-Key (after a timeout or a 503), ${q.retried.answered} of those clicks answered`,
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
