/**
 * `npm run bench:memory`: what the service's processes hold, under load and after it. On one Kafka node, the
 * real profile's `seckill serve` and `seckill worker` (a fresh database and Redis namespace each) are started
 * once per V8 setting compared (BENCH_MEMORY_FLAGS, `|` between settings, `,` between the flags of one, an item
 * spelled `NAME=value` set in the service's environment instead; by default the service's own flags, then none:
 * V8's own sizing). Each is sampled — resident memory,
 * heap used and heap total, read from its metrics port — at idle, at the end of an accept load (every order
 * accepted, a fresh buyer per request), at the end of a flood (a sold-out product), and 30 s after the last
 * load. Then the first setting runs the soak: BENCH_SOAK_SECONDS (300) of accept and flood in turns of 10 s, a
 * fresh buyer per request, sampled every 10 s; its resident memory should be flat over the last 3 minutes.
 * With BENCH_HEAP_SNAPSHOTS=1 the API writes a heap snapshot at idle, at the end of the loads and 30 s after
 * (`--heapsnapshot-signal`, into bench/results/heap/): compare them by constructor in Chrome's DevTools.
 * Writes bench/results/memory.json.
 *
 * Knobs: BENCH_MEMORY_FLAGS, BENCH_LOAD_SECONDS (30), BENCH_SOAK_SECONDS (300), BENCH_CONNECTIONS (256),
 * BENCH_HEAP_SNAPSHOTS.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JwtTokens } from '../src/adapters/http/tokens.js';
import { SERVICE_NODE_FLAGS } from '../src/infrastructure/node-flags.js';
import { startBenchBroker } from './lib/broker.js';
import { cpuBetween, snapshot } from './lib/cpu.js';
import { drive, type LoadResult } from './lib/cannon.js';
import { createDatabase, databaseUrl, dropDatabase, openAdmin } from './lib/mysql.js';
import {
  answers200,
  type Child,
  freePort,
  heapSnapshot,
  heapSnapshotFlags,
  runNode,
  startNode,
} from './lib/processes.js';
import {
  ADMISSION_ON,
  dropNamespace,
  listProduct,
  type Memory,
  memoryOf,
  metricSum,
  scrape,
  serviceEnv,
} from './lib/service.js';

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const LOAD_SECONDS = Number(env('BENCH_LOAD_SECONDS', '30'));
const SOAK_SECONDS = Number(env('BENCH_SOAK_SECONDS', '300'));
const CONNECTIONS = Number(env('BENCH_CONNECTIONS', '256'));
const SNAPSHOTS = env('BENCH_HEAP_SNAPSHOTS', '') === '1';
/** An item of a setting spelled `NAME=value` is the service's environment, anything else a flag for node. */
const ENV_ITEM = /^([A-Z][A-Z0-9_]*)=(.*)$/;
const SETTINGS: Array<Readonly<{ flags: string[]; env: Record<string, string> }>> = env(
  'BENCH_MEMORY_FLAGS',
  `${SERVICE_NODE_FLAGS.join(',')}|`,
)
  .split('|')
  .map((setting) => {
    const items = setting.split(',').filter(Boolean);
    const pairs = items.flatMap((item) => {
      const match = ENV_ITEM.exec(item);
      return match ? [[match[1]!, match[2]!] as const] : [];
    });
    return { flags: items.filter((item) => !ENV_ITEM.test(item)), env: Object.fromEntries(pairs) };
  });
const AFTER_MS = 30_000;
const SOAK_SAMPLE_MS = 10_000;
/** the soak's window that must be flat: its last 3 minutes */
const FLAT_WINDOW_MS = 180_000;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/infrastructure/main.js', import.meta.url));
const HEAP_DIR = path.join(ROOT, 'bench', 'results', 'heap');

const say = (line: string) => process.stdout.write(`[memory] ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type Sample = Readonly<{ at: string; api: Memory; worker: Memory }>;

type Service = Readonly<{
  base: string;
  api: Child;
  sample: (at: string) => Promise<Sample>;
  /** the API's garbage collections so far */
  gc: () => Promise<Collections>;
  snapshot: (label: string) => Promise<void>;
  stop: () => Promise<void>;
}>;

/** Buyers' tokens, one per request of a load: no buyer is seen twice. */
const freshBuyers = (tokens: JwtTokens) => {
  let next = 0;
  return (count: number): Promise<string[]> =>
    Promise.all(Array.from({ length: count }, () => tokens.sign({ userId: `m-${next++}`, role: 'user' })));
};

const startService = async (
  flags: readonly string[],
  environment: NodeJS.ProcessEnv,
  label: string,
): Promise<Service> => {
  const [apiPort, apiMetricsPort, workerMetricsPort] = [await freePort(), await freePort(), await freePort()];
  const heapDir = path.join(HEAP_DIR, label);
  if (SNAPSHOTS) await mkdir(heapDir, { recursive: true });
  const api = startNode(
    `${label}: serve`,
    MAIN,
    ['serve'],
    { ...environment, PORT: String(apiPort), SECKILL_METRICS_PORT: String(apiMetricsPort) },
    {
      nodeArgs: [...flags, ...(SNAPSHOTS ? heapSnapshotFlags(heapDir) : [])],
    },
  );
  const worker = startNode(
    `${label}: worker`,
    MAIN,
    ['worker'],
    { ...environment, SECKILL_METRICS_PORT: String(workerMetricsPort) },
    { nodeArgs: flags },
  );
  const base = `http://127.0.0.1:${apiPort}`;
  const apiMetrics = `http://127.0.0.1:${apiMetricsPort}`;
  const workerMetrics = `http://127.0.0.1:${workerMetricsPort}`;
  await answers200(api, `${base}/readyz`);
  await answers200(worker, `${workerMetrics}/readyz`);
  return {
    base,
    api,
    sample: async (at) => ({ at, api: await memoryOf(apiMetrics), worker: await memoryOf(workerMetrics) }),
    gc: () => collectionsOf(apiMetrics),
    snapshot: async (name) => {
      if (!SNAPSHOTS) return;
      const file = await heapSnapshot(api, heapDir);
      say(`  heap snapshot ${name}: ${path.join(path.relative(ROOT, heapDir), file)}`);
    },
    stop: async () => {
      await Promise.all([api.stop(), worker.stop()]);
    },
  };
};

const show = (sample: Sample): string =>
  `${sample.at.padEnd(22)} API ${sample.api.rssMb} MB resident, heap ${sample.api.heapUsedMb} of ${sample.api.heapTotalMb} MB; worker ${sample.worker.rssMb} MB, heap ${sample.worker.heapUsedMb} of ${sample.worker.heapTotalMb} MB`;

type Collections = Readonly<Record<string, Readonly<{ count: number; ms: number }>>>;
type Load = LoadResult & Readonly<{ apiCpuMicros: number; gc: Collections }>;

/** The process's garbage collections so far, by kind (prom-client's GC histogram on its metrics port). */
const collectionsOf = async (metrics: string): Promise<Collections> => {
  const text = await scrape(metrics);
  const kinds = new Set(
    [...text.matchAll(/seckill_nodejs_gc_duration_seconds_count\{kind="(\w+)"/g)].map((m) => m[1]!),
  );
  return Object.fromEntries(
    [...kinds].map((kind) => [
      kind,
      {
        count: metricSum(text, 'seckill_nodejs_gc_duration_seconds_count', `kind="${kind}"`),
        ms: metricSum(text, 'seckill_nodejs_gc_duration_seconds_sum', `kind="${kind}"`) * 1000,
      },
    ]),
  );
};
type Phases = Readonly<{ flags: readonly string[]; samples: Sample[]; loads: Record<string, Load> }>;

/** Idle, accept, flood, 30 s after: the memory at each point, and what each load answered. */
const phases = async (
  service: Service,
  flags: readonly string[],
  buyers: (count: number) => Promise<string[]>,
  products: Readonly<{ accept: number; flood: number }>,
): Promise<Phases> => {
  const samples: Sample[] = [];
  const keep = async (at: string) => {
    const sample = await service.sample(at);
    samples.push(sample);
    say(`  ${show(sample)}`);
  };
  await keep('idle');
  await service.snapshot('idle');
  const loads: Record<string, Load> = {};
  for (const [name, productId] of [
    ['accept', products.accept],
    ['flood', products.flood],
  ] as const) {
    // as many buyers as a load can send requests: each request a buyer of its own
    const tokens = await buyers(LOAD_SECONDS * 6_000);
    const probes = [{ name: 'api', pid: service.api.process.pid }];
    const gcBefore = await service.gc();
    const before = await snapshot(probes);
    const load = await drive({
      url: service.base,
      productId,
      tokens,
      connections: CONNECTIONS,
      seconds: LOAD_SECONDS,
    });
    const cores = cpuBetween(before, await snapshot(probes))['api'] ?? 0;
    const gcAfter = await service.gc();
    // the API's garbage collections over the load, by kind: how many, and ms spent in them
    const gc = Object.fromEntries(
      Object.entries(gcAfter).map(([kind, after]) => {
        const was = gcBefore[kind] ?? { count: 0, ms: 0 };
        return [kind, { count: after.count - was.count, ms: Math.round(after.ms - was.ms) }];
      }),
    );
    say(`  ${name}: the API's collections ${JSON.stringify(gc)}`);
    // the API's CPU per answer (per accepted order in the accept load): steadier than answers per second
    const answers = name === 'accept' ? (load.statuses['202'] ?? 0) : load.answered;
    const apiCpuMicros = Math.round((cores * load.seconds * 1e6) / Math.max(1, answers));
    loads[name] = { ...load, apiCpuMicros, gc };
    say(
      `  ${name}: ${load.rps} answers/s, the API's CPU ${apiCpuMicros} µs per ${name === 'accept' ? 'order' : 'answer'}`,
    );
    await keep(`end of ${name}`);
  }
  await service.snapshot('end of the loads');
  await sleep(AFTER_MS);
  await keep('30 s after');
  await service.snapshot('30 s after');
  return { flags, samples, loads };
};

/** Accept and flood in turns of 10 s for the soak's length, a fresh buyer per request, sampled every 10 s. */
const soak = async (
  service: Service,
  buyers: (count: number) => Promise<string[]>,
  products: Readonly<{ accept: number; flood: number }>,
): Promise<{ samples: Sample[]; flatGrowth: number; answered: number }> => {
  const samples: Sample[] = [];
  let answered = 0;
  const started = Date.now();
  for (let turn = 0; Date.now() - started < SOAK_SECONDS * 1000; turn += 1) {
    const tokens = await buyers(SOAK_SAMPLE_MS * 6);
    const result = await drive({
      url: service.base,
      productId: turn % 2 === 0 ? products.accept : products.flood,
      tokens,
      connections: CONNECTIONS,
      seconds: SOAK_SAMPLE_MS / 1000,
    });
    answered += result.answered;
    const sample = await service.sample(`soak ${Math.round((Date.now() - started) / 1000)} s`);
    samples.push(sample);
    say(`  ${show(sample)} (${result.rps}/s)`);
  }
  // the last 3 minutes: growth from the first sample in that window to the last
  const inWindow = samples.slice(-Math.round(FLAT_WINDOW_MS / SOAK_SAMPLE_MS) - 1);
  const first = inWindow[0]!.api.rssMb;
  const last = inWindow.at(-1)!.api.rssMb;
  return { samples, flatGrowth: Math.round(((last - first) / first) * 1000) / 1000, answered };
};

const run = async () => {
  const id = randomUUID().slice(0, 8);
  const secret = `bench-${randomUUID()}-${randomUUID()}`;
  const tokens = new JwtTokens(secret);
  const buyers = freshBuyers(tokens);
  const adminToken = await tokens.sign({ userId: 'bench-admin', role: 'admin' });
  const admin = await openAdmin();
  const kafka = await startBenchBroker(say, false, 1);
  const results: Phases[] = [];
  let soaked: Awaited<ReturnType<typeof soak>> | null = null;
  try {
    for (const [n, { flags, env: settingEnv }] of SETTINGS.entries()) {
      const label = `setting-${n + 1}`;
      const db = `seckill_bench_memory_${id}_${n}`;
      const namespace = `bench-memory-${id}-${n}:`;
      await createDatabase(admin, db);
      const environment = serviceEnv({
        secret,
        mysqlUrl: databaseUrl(db),
        namespace,
        brokers: kafka.brokers,
        admission: ADMISSION_ON,
        extra: { ...kafka.env, SECKILL_KAFKA_NAMESPACE: `bench-memory-${id}-${n}`, ...settingEnv },
      });
      await runNode(MAIN, ['migrate'], environment);
      say(
        `${label}: ${Object.entries(settingEnv)
          .map(([name, value]) => `${name}=${value} `)
          .join('')}node ${flags.join(' ') || '(no flags)'}`,
      );
      const service = await startService(flags, environment, label);
      try {
        const products = {
          accept: await listProduct(service.base, adminToken, 'memory accept', 50_000_000, 1),
          flood: await listProduct(service.base, adminToken, 'memory flood', 1, 1),
        };
        // the flood's one unit goes first: from then on it is sold out
        await drive({
          url: service.base,
          productId: products.flood,
          tokens: await buyers(50),
          connections: 4,
          amount: 50,
        });
        results.push(await phases(service, flags, buyers, products));
        if (n === 0 && SOAK_SECONDS > 0) {
          say(`${label}: soak, ${SOAK_SECONDS} s`);
          soaked = await soak(service, buyers, products);
          say(
            `${label}: resident memory over the soak's last 3 minutes grew ${(soaked.flatGrowth * 100).toFixed(1)} %`,
          );
        }
      } finally {
        await service.stop();
        await dropDatabase(admin, db).catch(() => undefined);
        await dropNamespace(namespace).catch(() => undefined);
      }
    }
  } finally {
    await kafka.stop();
    await admin.end();
  }
  const file = path.join(ROOT, 'bench', 'results', 'memory.json');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(
    file,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        loadSeconds: LOAD_SECONDS,
        connections: CONNECTIONS,
        settings: results.map((r, n) => ({
          flags: r.flags,
          ...(Object.keys(SETTINGS[n]!.env).length > 0 ? { env: SETTINGS[n]!.env } : {}),
          samples: r.samples,
          loads: Object.fromEntries(
            Object.entries(r.loads).map(([k, l]) => [
              k,
              { rps: l.rps, statuses: l.statuses, p99Ms: l.p99Ms, apiCpuMicros: l.apiCpuMicros, gc: l.gc },
            ]),
          ),
        })),
        soak: soaked,
      },
      null,
      2,
    )}\n`,
  );
  say(`written ${path.relative(ROOT, file)}`);
};

run().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
