/**
 * `npm run bench:profile`: where the real service's CPU goes while it accepts orders. It starts a 3-broker
 * Kafka cluster and the service (`seckill all`, on a fresh database and Redis namespace) under `node --cpu-prof`,
 * drives the order route at PROFILE_CONNECTIONS (256) for PROFILE_SECONDS (10) with stock to spare, waits until
 * MySQL has decided every reservation, stops the service and reads its profile: self time by package and by
 * layer of the service, and the busiest functions, for the samples taken from the start of the load until
 * the backlog was decided. Prints a table and writes bench/results/profile-accept.json; for the accept load
 * on `seckill all`, it also puts its figures next to bench/results/profile-accept.before.json (the same run
 * on the code before group commit) in docs/benchmarks.md.
 *
 * Knobs: PROFILE_SECONDS, PROFILE_CONNECTIONS, PROFILE_PHASE (accept | flood), PROFILE_SPLIT (true: the API
 * and a worker process, the API profiled), PROFILE_KEEP (a path to copy
 * the raw .cpuprofile to, for Chrome DevTools), PROFILE_HEAP_SNAPSHOTS (1: the profiled process also writes heap
 * snapshots — at idle, once the load's backlog is decided and 30 s later — into a folder of bench/results/heap,
 * to compare by constructor in Chrome's DevTools; load: one more halfway through the load, what the requests in
 * flight hold, the run's figures then stalled by it), PROFILE_ALLOCATIONS (1: the profiled process's allocations over
 * the load, freed ones included, from V8's sampling heap profiler over its inspector port: KB per answer by package
 * and layer, and the functions that allocate the most; survivors: only what outlived a scavenge, what is promoted to the
 * old generation and makes the full collections), BENCH_KAFKA (kafka | mock: librdkafka's mock cluster), BENCH_MYSQL_URL, SECKILL_REDIS_URL. Extra SECKILL_* settings for the service: PROFILE_ENV='{"SECKILL_GROUP_COMMIT_WAIT_MS":"2"}'.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JwtTokens } from '../src/adapters/http/tokens.js';
import { SERVICE_NODE_FLAGS } from '../src/infrastructure/node-flags.js';
import { drive } from './lib/cannon.js';
import * as prettier from 'prettier';
import { type ProfileRun, readProfile, renderProfileComparison, summarize } from './lib/cpu-profile.js';
import { count, databaseUrl, dropDatabase, openAdmin } from './lib/mysql.js';
import {
  answers200,
  freePort,
  heapSnapshot,
  heapSnapshotFlags,
  runNode,
  startNode,
} from './lib/processes.js';
import { ADMISSION_ON, batchingOf, call, dropNamespace, listProduct, serviceEnv } from './lib/service.js';
import { startBenchBroker } from './lib/broker.js';
import { type Allocations, inspectorFlag, samplingAllocations } from './lib/heap-profile.js';

const SECONDS = Number(process.env['PROFILE_SECONDS'] ?? '10');
const CONNECTIONS = Number(process.env['PROFILE_CONNECTIONS'] ?? '256');
const PHASE = process.env['PROFILE_PHASE'] === 'flood' ? 'flood' : 'accept';
const SPLIT = process.env['PROFILE_SPLIT'] === 'true';
const HEAP_SNAPSHOTS = ['1', 'load'].includes(process.env['PROFILE_HEAP_SNAPSHOTS'] ?? '');
/** one more snapshot halfway through the load: what the requests in flight hold (the run's figures then stall) */
const SNAPSHOT_MID_LOAD = process.env['PROFILE_HEAP_SNAPSHOTS'] === 'load';
const ALLOCATIONS = ['1', 'survivors'].includes(process.env['PROFILE_ALLOCATIONS'] ?? '');
const SURVIVORS_ONLY = process.env['PROFILE_ALLOCATIONS'] === 'survivors';
const EXTRA = JSON.parse(process.env['PROFILE_ENV'] ?? '{}') as Record<string, string>;
const BUYERS = 10_000;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/infrastructure/main.js', import.meta.url));
const say = (line: string) => process.stderr.write(`[profile] ${line}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);
const startedAt = new Date().toISOString();
const MARKERS = { start: '<!-- bench-profile:accept:start -->', end: '<!-- bench-profile:accept:end -->' };

/** Puts this run next to the one kept from before group commit, in docs/benchmarks.md. */
const updateProfileDoc = async (after: ProfileRun): Promise<void> => {
  const before = await readFile(`${ROOT}bench/results/profile-accept.before.json`, 'utf8')
    .then((text) => JSON.parse(text) as ProfileRun)
    .catch(() => null);
  const path = `${ROOT}docs/benchmarks.md`;
  const page = await readFile(path, 'utf8');
  const start = page.indexOf(MARKERS.start);
  const end = page.indexOf(MARKERS.end);
  if (!before || start < 0 || end < start) return;
  const block = renderProfileComparison(before, after);
  const next = `${page.slice(0, start + MARKERS.start.length)}\n\n${block}\n\n${page.slice(end)}`;
  const options = (await prettier.resolveConfig(path)) ?? {};
  await writeFile(path, await prettier.format(next, { ...options, filepath: path }));
  say('updated the profile block of docs/benchmarks.md');
};

/** What the load allocated, per answer, by where the code lives and by function. */
const allocationLines = (a: Allocations, answers: number): string[] => {
  const kb = (mb: number) => `${((mb * 1024) / Math.max(1, answers)).toFixed(1).padStart(6)} KB`;
  const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)} %`;
  return [
    SURVIVORS_ONLY
      ? `outlived a scavenge over the load (sampled: promoted, or still alive): ${a.sampledMb} MB, ${kb(a.sampledMb).trim()} per answer`
      : `allocated over the load (sampled, freed objects included): ${a.sampledMb} MB, ${kb(a.sampledMb).trim()} per answer`,
    '',
    'allocations by where the code lives (per answer):',
    ...a.buckets.map((b) => `  ${pct(b.share)}  ${kb(b.mb)}  ${b.name}`),
    '',
    'functions that allocate the most (per answer):',
    ...a.functions.map((f) => `  ${pct(f.share)}  ${kb(f.mb)}  ${f.name}`),
    '',
  ];
};

const id = randomUUID().replaceAll('-', '').slice(0, 12);
const db = `seckill_bench_${id}_profile`;
const namespace = `bench-${id}:`;
const secret = `profile-${randomUUID()}-${randomUUID()}`;
const signer = new JwtTokens(secret);
const tokens = await Promise.all(
  Array.from({ length: BUYERS }, (_, i) => signer.sign({ userId: `profile-${id}-${i}`, role: 'user' }, 3600)),
);
const adminToken = await signer.sign({ userId: 'profile-admin', role: 'admin' }, 3600);
const profileDir = await mkdtemp(join(tmpdir(), 'seckill-cpu-prof-'));
const heapDir = `${ROOT}bench/results/heap/profile-${PHASE}${SPLIT ? '-split' : ''}`;
if (HEAP_SNAPSHOTS) await mkdir(heapDir, { recursive: true });
const admin = await openAdmin();
const kafka = await startBenchBroker(
  (line) => process.stderr.write(`${line}\n`),
  process.env['BENCH_KAFKA'] === 'mock',
);
const env = serviceEnv({
  secret,
  mysqlUrl: databaseUrl(db),
  namespace,
  brokers: kafka.brokers,
  admission: ADMISSION_ON,
  extra: { ...kafka.env, ...EXTRA },
});
let service: ReturnType<typeof startNode> | null = null;
let worker: ReturnType<typeof startNode> | null = null;
try {
  say(`migrate: ${(await runNode(MAIN, ['migrate'], env)).trim()}`);
  const port = await freePort();
  // the batching figures are scraped from the processes' metrics ports (loopback, no credential)
  const metricsPort = await freePort();
  const inspectorPort = await freePort();
  // SPLIT: the API (profiled) and a worker process; else one `seckill all`
  service = startNode(
    SPLIT ? 'seckill serve' : 'seckill all',
    MAIN,
    [SPLIT ? 'serve' : 'all'],
    { ...env, PORT: String(port), SECKILL_METRICS_PORT: String(metricsPort) },
    {
      graceMs: 60_000,
      nodeArgs: [
        ...SERVICE_NODE_FLAGS,
        '--cpu-prof',
        `--cpu-prof-dir=${profileDir}`,
        ...(HEAP_SNAPSHOTS ? heapSnapshotFlags(heapDir) : []),
        ...(ALLOCATIONS ? [inspectorFlag(inspectorPort)] : []),
      ],
    },
  );
  const snapshot = async (at: string) => {
    if (!HEAP_SNAPSHOTS || !service) return;
    say(`heap snapshot ${at}: ${join(heapDir.slice(ROOT.length), await heapSnapshot(service, heapDir))}`);
  };
  const base = `http://127.0.0.1:${port}`;
  const metricsBase = `http://127.0.0.1:${metricsPort}`;
  const workerMetricsPort = await freePort();
  const workerMetricsBase = `http://127.0.0.1:${workerMetricsPort}`;
  if (SPLIT) {
    worker = startNode(
      'seckill worker',
      MAIN,
      ['worker'],
      { ...env, SECKILL_METRICS_PORT: String(workerMetricsPort) },
      { nodeArgs: SERVICE_NODE_FLAGS },
    );
    await answers200(worker, `${workerMetricsBase}/readyz`);
  }
  await answers200(service, `${base}/readyz`);
  const stock = PHASE === 'flood' ? 100 : 1_000_000;
  const productId = await listProduct(base, adminToken, `profile ${PHASE}`, stock, 10_000);
  // warm-up (JIT, pools; for the flood, selling the stock out)
  await drive({ url: base, connections: 50, tokens, productId, seconds: 2 });
  const undecided = () => count(admin, `SELECT COUNT(*) FROM \`${db}\`.orders WHERE status = 'RESERVED'`);
  while ((await undecided()) > 0) await sleep(100);
  await snapshot('at idle');
  const sampled = ALLOCATIONS
    ? await samplingAllocations(inspectorPort, SURVIVORS_ONLY ? 'survivors' : 'all')
    : null;
  const from = nowMicros();
  const loading = drive({ url: base, connections: CONNECTIONS, tokens, productId, seconds: SECONDS });
  if (SNAPSHOT_MID_LOAD) {
    await sleep(SECONDS * 500);
    await snapshot(`halfway through the load (${CONNECTIONS} connections)`);
  }
  const load = await loading;
  const loadEnd = nowMicros();
  const allocations = await sampled?.();
  const backlogAtLoadEnd = await undecided();
  while ((await undecided()) > 0) await sleep(50);
  const to = nowMicros();
  // taken after the load's figures: a snapshot stops the process for seconds
  await snapshot('at the end of the load, the backlog decided');
  const audit = await call(`${base}/api/v1/admin/audit`, adminToken);
  const batching = await batchingOf(metricsBase, SPLIT ? workerMetricsBase : metricsBase);
  if (HEAP_SNAPSHOTS) {
    await sleep(30_000);
    await snapshot('30 s later');
  }
  await service.stop();
  const file = (await readdir(profileDir)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`the service wrote no profile in ${profileDir}:\n${service.output()}`);
  const profile = await readProfile(join(profileDir, file));
  const keep = process.env['PROFILE_KEEP'];
  if (keep) await copyFile(join(profileDir, file), keep);
  const summary = summarize(profile, 30, { fromMicros: from, toMicros: to });
  const accepted = load.statuses['202'] ?? 0;
  const result = {
    phase: PHASE,
    connections: CONNECTIONS,
    seconds: load.seconds,
    rps: load.rps,
    statuses: load.statuses,
    p50Ms: load.p50Ms,
    p99Ms: load.p99Ms,
    backlogAtLoadEnd,
    drainMs: Math.round((to - loadEnd) / 1000),
    auditOk: (audit.body as { ok?: boolean } | null)?.ok === true,
    sampledCpuMicrosPerAnswer: Math.round((summary.busyMs * 1000) / Math.max(1, load.answered)),
    sampledCpuMicrosPerAccepted: accepted ? Math.round((summary.busyMs * 1000) / accepted) : null,
    batching,
    settings: EXTRA,
    ...summary,
    ...(allocations
      ? {
          allocations: {
            ...allocations,
            kbPerAnswer: Math.round((allocations.sampledMb * 1024) / Math.max(1, load.answered)),
          },
        }
      : {}),
  };
  await mkdir(`${ROOT}bench/results`, { recursive: true });
  const out = `${ROOT}bench/results/profile-${PHASE}${SPLIT ? '-split' : ''}.json`;
  await writeFile(out, `${JSON.stringify({ startedAt, ...result }, null, 2)}\n`);
  if (PHASE === 'accept' && !SPLIT) await updateProfileDoc(result);
  const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)} %`;
  process.stdout.write(
    [
      `${PHASE} @${CONNECTIONS}: ${load.rps} answers/s, ${JSON.stringify(load.statuses)}, p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms; ${backlogAtLoadEnd} undecided when the load ended, decided ${result.drainMs} ms later; audit ok ${result.auditOk}`,
      `batching (whole run, warm-up included): ${JSON.stringify(batching)}`,
      `busy ${summary.busyMs} ms of ${summary.wallMs} ms sampled; ${result.sampledCpuMicrosPerAnswer} µs per answer${accepted ? `, ${result.sampledCpuMicrosPerAccepted} µs per accepted order` : ''}`,
      '',
      'self time by where the code lives:',
      ...summary.buckets.map((b) => `  ${pct(b.share)}  ${b.ms.toFixed(0).padStart(7)} ms  ${b.name}`),
      '',
      'busiest functions (self time):',
      ...summary.functions.map((f) => `  ${pct(f.share)}  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}`),
      '',
      ...(allocations ? allocationLines(allocations, load.answered) : []),
    ].join('\n'),
  );
} finally {
  await service?.stop();
  await worker?.stop();
  await kafka.stop();
  await dropDatabase(admin, db).catch(() => undefined);
  await admin.end();
  await dropNamespace(namespace).catch(() => undefined);
  await rm(profileDir, { recursive: true, force: true });
}
