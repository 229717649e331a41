/**
 * `npm run bench:audit`: the audit's heap while it replays a long history, against a baseline that reads the
 * whole history into memory first (as the audit did before it streamed), in the same run. Prints the heap
 * after a forced collection at each quarter of the history, and the ratio of their growth.
 *
 * BENCH_AUDIT_EVENTS (default 200,000) sets the history's length.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { AuditHistory, StockBooksReader, type StoredEvent } from '../src/application/index.js';
import { MemoryDatabase } from '../src/adapters/memory/memory-database.js';
import { MemoryStockGate } from '../src/adapters/memory/memory-stock-gate.js';
import { MemoryUnitOfWork } from '../src/adapters/memory/memory-unit-of-work.js';
import { InProcessHistoryFolds } from '../src/adapters/system/in-process-history-folds.js';
import { SystemClock } from '../src/adapters/system/system-clock.js';
import { replayHistory } from '../src/domain/index.js';
import { SyntheticHistory } from '../scripts/history/synthetic-history.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
const EVENTS = Number(process.env['BENCH_AUDIT_EVENTS'] ?? 200_000);
const STOCK = 1_000;
const PAGE = 1_000;

type Sample = Readonly<{ events: number; heapMiB: number }>;

const heap = (): number => {
  gc();
  return process.memoryUsage().heapUsed / MiB;
};

/** A history that samples the heap each time a quarter of it has been handed out. */
const sampledHistory = (samples: Sample[]) => {
  const orders = SyntheticHistory.ordersFor(EVENTS, STOCK);
  let history: SyntheticHistory | null = null;
  history = new SyntheticHistory({ orders, stock: STOCK, window: 200 }, (position) => {
    const total = history?.total ?? EVENTS;
    const next = Math.min(total, Math.ceil(total / 4) * (samples.length + 1));
    if (samples.length < 4 && position >= next) samples.push({ events: position, heapMiB: heap() });
  });
  return history;
};

const streaming = async (): Promise<Sample[]> => {
  const samples: Sample[] = [];
  const db = new MemoryDatabase();
  const report = await new AuditHistory({
    events: sampledHistory(samples),
    folds: new InProcessHistoryFolds(),
    books: new StockBooksReader({ gate: new MemoryStockGate(), unitOfWork: new MemoryUnitOfWork(db) }),
    clock: new SystemClock(),
    staleAfterMs: 24 * 3_600_000,
    pageSize: PAGE,
  }).run();
  if (!report.ok) throw new Error(`the audit found violations: ${JSON.stringify(report.violations[0])}`);
  return samples;
};

/** The baseline: every page kept, then replayed at once. */
const wholeHistory = async (): Promise<Sample[]> => {
  const samples: Sample[] = [];
  const history = sampledHistory(samples);
  const all: StoredEvent[] = [];
  for (let after = 0; ;) {
    const page = await history.readAll(after, PAGE);
    all.push(...page);
    if (page.length < PAGE) break;
    after = page.at(-1)!.position;
  }
  const replay = replayHistory(all);
  if (replay.violations.length > 0) throw new Error('the baseline replay found violations');
  return samples;
};

const growth = (samples: readonly Sample[]): number =>
  (samples.at(-1)?.heapMiB ?? 0) - (samples[0]?.heapMiB ?? 0);

const main = async () => {
  const start = heap();
  const streamed = await streaming();
  const baseline = await wholeHistory();
  const line = (name: string, samples: readonly Sample[]) =>
    `${name.padEnd(22)} ${samples.map((s) => `${(s.events / 1000).toFixed(0).padStart(4)}k: ${s.heapMiB.toFixed(1).padStart(6)} MiB`).join('   ')}   growth ${growth(samples).toFixed(1)} MiB`;
  process.stdout.write(
    `audit heap over ${EVENTS.toLocaleString('en')} events (heap at start ${start.toFixed(1)} MiB, after a forced GC at each quarter)\n`,
  );
  process.stdout.write(
    `${line('streamed (the audit)', streamed)}\n${line('whole history (base)', baseline)}\n`,
  );
  const ratio = growth(baseline) / Math.max(growth(streamed), 0.1);
  // a growth under 0.1 MiB counts as 0.1, so the ratio is a floor
  process.stdout.write(`the baseline's heap grows at least ${ratio.toFixed(0)}× as much as the audit's\n`);
  const out = path.join(import.meta.dirname, '..', '..', 'bench', 'results', 'audit-heap.json');
  writeFileSync(
    out,
    `${JSON.stringify({ at: new Date().toISOString(), events: EVENTS, streamed, baseline }, null, 2)}\n`,
  );
};

await main();
