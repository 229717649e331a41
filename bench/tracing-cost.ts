/**
 * `npm run bench:tracing`: what tracing costs the order path. On one Kafka node and one Zipkin server, the
 * service (`seckill serve` and `seckill worker`, a fresh database and Redis namespace each) is started three
 * times — tracing off, tracing to Zipkin at SECKILL_OTEL_SAMPLE_RATIO 0.1, and the same tracing to a null sink in
 * this process (the service's cost without Zipkin's JVM on the same cores) — beside bare express; with
 * BENCH_BEFORE (the `dist` folder of an earlier build) one more side runs that build, so that "off" is measured
 * against the code before tracing in the same run. The accept load (every order accepted) and the flood (a
 * sold-out product) at 256 connections, in alternated rounds; each load's median round stands for it. First, one
 * flood request's tracing is timed in this process alone (off, on and not drawn, sampled). Prints answers per
 * second and the API process's CPU µs per answer, with the ratios, and writes bench/results/tracing.json.
 *
 * Knobs: BENCH_SECONDS (8), BENCH_ROUNDS (3), BENCH_CONNECTIONS (256), BENCH_SAMPLE_RATIO (0.1), BENCH_BEFORE.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JwtTokens } from '../src/adapters/http/tokens.js';
import { SERVICE_NODE_FLAGS } from '../src/infrastructure/node-flags.js';
import { ZipkinServer } from '../scripts/zipkin/server.js';
import { startBenchBroker } from './lib/broker.js';
import { drive, type LoadResult, perSecond } from './lib/cannon.js';
import { cpuBetween, snapshot } from './lib/cpu.js';
import { createDatabase, databaseUrl, dropDatabase, openAdmin } from './lib/mysql.js';
import { floodTracingCost, nullSink } from './lib/span-cost.js';
import { answers200, type Child, freePort, portAnnounced, runNode, startNode } from './lib/processes.js';
import { ADMISSION_OFF, dropNamespace, listProduct, serviceEnv } from './lib/service.js';

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const SECONDS = Number(env('BENCH_SECONDS', '8'));
const ROUNDS = Number(env('BENCH_ROUNDS', '3'));
const CONNECTIONS = Number(env('BENCH_CONNECTIONS', '256'));
const SAMPLE_RATIO = env('BENCH_SAMPLE_RATIO', '0.1');
const BEFORE = process.env['BENCH_BEFORE'];
const BUYERS = 10_000;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/infrastructure/main.js', import.meta.url));
const BARE = fileURLToPath(new URL('./baselines/bare-express.js', import.meta.url));

const say = (line: string) => process.stdout.write(`[tracing] ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

type Target = Readonly<{
  key: string;
  url: string;
  productId: number;
  pid: number | undefined;
  accepted: boolean;
}>;
type Round = Readonly<{ perSecond: number; cpuMicrosPerAnswer: number; p99Ms: number; result: LoadResult }>;

/** One load, its answers per second (202s for the accept load) and its target's CPU per answer. */
const measure = async (target: Target, tokens: readonly string[]): Promise<Round> => {
  const probes = [{ name: 'target', pid: target.pid }];
  const before = await snapshot(probes);
  const result = await drive({
    url: target.url,
    productId: target.productId,
    tokens,
    connections: CONNECTIONS,
    seconds: SECONDS,
  });
  const cores = cpuBetween(before, await snapshot(probes))['target'] ?? 0;
  const rate = target.accepted ? perSecond(result, 202) : result.rps;
  return {
    perSecond: rate,
    cpuMicrosPerAnswer: result.rps > 0 ? Math.round((cores * 1e6) / result.rps) : 0,
    p99Ms: result.p99Ms,
    result,
  };
};

type Side = Readonly<{ name: string; main: string; extra: Record<string, string> }>;

const run = async () => {
  const id = randomUUID().slice(0, 8);
  const secret = `bench-${randomUUID()}-${randomUUID()}`;
  const cleanups: Array<() => Promise<unknown>> = [];
  const admin = await openAdmin();
  cleanups.push(() => admin.end());
  try {
    const [kafka, zipkin] = await Promise.all([
      startBenchBroker(say, false, 1),
      ZipkinServer.start({ dir: path.join(ROOT, '.cache', 'zipkin', 'bench'), say }),
    ]);
    const sink = await nullSink();
    cleanups.unshift(
      () => kafka.stop(),
      () => zipkin.stop(),
      () => sink.close(),
    );
    const cost = await floodTracingCost();
    say(
      `one flood request's tracing in process: off ${cost.offMicros.toFixed(1)} µs, on and not drawn ${cost.unsampledMicros.toFixed(1)} µs, sampled ${cost.sampledMicros.toFixed(1)} µs CPU`,
    );
    const tokens = new JwtTokens(secret);
    const buyers = await Promise.all(
      Array.from({ length: BUYERS }, (_, i) => tokens.sign({ userId: `buyer-${i}`, role: 'user' })),
    );
    const adminToken = await tokens.sign({ userId: 'bench-admin', role: 'admin' });

    const sides: Side[] = [
      ...(BEFORE
        ? [{ name: 'before', main: path.resolve(BEFORE, 'src/infrastructure/main.js'), extra: {} }]
        : []),
      { name: 'off', main: MAIN, extra: {} },
      {
        name: `on ${SAMPLE_RATIO}`,
        main: MAIN,
        extra: { SECKILL_OTEL_ZIPKIN_URL: zipkin.spansUrl, SECKILL_OTEL_SAMPLE_RATIO: SAMPLE_RATIO },
      },
      // the same spans, sent where nothing is done with them: the service's cost without Zipkin's on the same cores
      {
        name: `sink ${SAMPLE_RATIO}`,
        main: MAIN,
        extra: { SECKILL_OTEL_ZIPKIN_URL: sink.url, SECKILL_OTEL_SAMPLE_RATIO: SAMPLE_RATIO },
      },
    ];
    const targets: Target[] = [];
    const bare = startNode('bare express', BARE, [], { ...process.env, PORT: '0' });
    cleanups.unshift(() => bare.stop());
    targets.push({
      key: 'bare express',
      url: `http://127.0.0.1:${await portAnnounced(bare)}`,
      productId: 1,
      pid: bare.process.pid,
      accepted: false,
    });
    for (const [n, side] of sides.entries()) {
      const db = `seckill_bench_tracing_${id}_${n}`;
      const namespace = `bench-tracing-${id}-${n}:`;
      await createDatabase(admin, db);
      cleanups.unshift(
        () => dropDatabase(admin, db),
        () => dropNamespace(namespace),
      );
      const sideEnv = serviceEnv({
        secret,
        mysqlUrl: databaseUrl(db),
        namespace,
        brokers: kafka.brokers,
        admission: ADMISSION_OFF,
        extra: { ...kafka.env, ...side.extra },
      });
      await runNode(side.main, ['migrate'], sideEnv);
      const port = await freePort();
      const api: Child = startNode(
        `${side.name}: serve`,
        side.main,
        ['serve'],
        { ...sideEnv, PORT: String(port) },
        {
          nodeArgs: SERVICE_NODE_FLAGS,
        },
      );
      const worker: Child = startNode(`${side.name}: worker`, side.main, ['worker'], sideEnv, {
        nodeArgs: SERVICE_NODE_FLAGS,
      });
      cleanups.unshift(
        () => api.stop(),
        () => worker.stop(),
      );
      const base = `http://127.0.0.1:${port}`;
      await answers200(api, `${base}/readyz`);
      const accept = await listProduct(base, adminToken, 'accept', 5_000_000, 10_000);
      const flood = await listProduct(base, adminToken, 'flood', 100, 1);
      targets.push(
        { key: `${side.name} accept`, url: base, productId: accept, pid: api.process.pid, accepted: true },
        { key: `${side.name} flood`, url: base, productId: flood, pid: api.process.pid, accepted: false },
      );
      say(`${side.name}: serve pid ${api.process.pid}, worker pid ${worker.process.pid}`);
    }
    // warm-up: every target once, not kept
    for (const target of targets)
      await drive({
        url: target.url,
        productId: target.productId,
        tokens: buyers,
        connections: 50,
        seconds: 2,
      });

    const rounds: Record<string, Round[]> = {};
    for (let round = 0; round < ROUNDS; round += 1)
      for (let i = 0; i < targets.length; i += 1) {
        const target = targets[(i + round) % targets.length]!;
        const measured = await measure(target, buyers);
        (rounds[target.key] ??= []).push(measured);
        say(
          `round ${round + 1} ${target.key}: ${measured.perSecond}/s, ${measured.cpuMicrosPerAnswer} µs CPU per answer, p99 ${measured.p99Ms} ms`,
        );
        // the worker commits what the accept load reserved before the next load starts
        if (target.accepted) await sleep(3_000);
      }

    const figures = Object.fromEntries(
      Object.entries(rounds).map(([key, list]) => [
        key,
        {
          perSecond: median(list.map((r) => r.perSecond)),
          cpuMicrosPerAnswer: median(list.map((r) => r.cpuMicrosPerAnswer)),
          p99Ms: median(list.map((r) => r.p99Ms)),
          rounds: list.map((r) => r.perSecond),
          roundsCpu: list.map((r) => r.cpuMicrosPerAnswer),
          non2xx: list.reduce(
            (n, r) => n + (r.result.statuses['500'] ?? 0) + (r.result.statuses['503'] ?? 0),
            0,
          ),
        },
      ]),
    );
    const bareRate = figures['bare express']!.perSecond;
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    const comparisons: Record<string, number> = {};
    for (const load of ['accept', 'flood']) {
      const off = figures[`off ${load}`]!;
      comparisons[`${load}: off × bare express`] = ratio(off.perSecond, bareRate);
      for (const [to, side] of [
        ['Zipkin', `on ${SAMPLE_RATIO}`],
        ['null sink', `sink ${SAMPLE_RATIO}`],
      ] as const) {
        const traced = figures[`${side} ${load}`]!;
        comparisons[`${load}: ${SAMPLE_RATIO} to ${to} / off, answers`] = ratio(
          traced.perSecond,
          off.perSecond,
        );
        comparisons[`${load}: ${SAMPLE_RATIO} to ${to} / off, CPU per answer`] = ratio(
          traced.cpuMicrosPerAnswer,
          off.cpuMicrosPerAnswer,
        );
      }
      const before = figures[`before ${load}`];
      if (before) {
        comparisons[`${load}: off / before, answers`] = ratio(off.perSecond, before.perSecond);
        comparisons[`${load}: off / before, CPU per answer`] = ratio(
          off.cpuMicrosPerAnswer,
          before.cpuMicrosPerAnswer,
        );
      }
    }
    say('');
    for (const [key, f] of Object.entries(figures))
      say(
        `${key.padEnd(16)} ${String(f.perSecond).padStart(6)}/s (rounds ${f.rounds.join(', ')}), ${f.cpuMicrosPerAnswer} µs CPU/answer (rounds ${f.roundsCpu.join(', ')}), p99 ${f.p99Ms} ms, 5xx ${f.non2xx}`,
      );
    for (const [key, value] of Object.entries(comparisons)) say(`${key}: ${value}`);
    const spans = await fetch(`${zipkin.url}/api/v2/services`).then((r) => r.json() as Promise<string[]>);
    say(`Zipkin got spans from ${spans.join(', ')}`);
    const file = fileURLToPath(new URL('../../bench/results/tracing.json', import.meta.url));
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(
      file,
      `${JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, sampleRatio: Number(SAMPLE_RATIO), floodTracingInProcess: cost, figures, comparisons }, null, 2)}\n`,
    );
    say(`written ${path.relative(ROOT, file)}`);
  } finally {
    for (const cleanup of cleanups)
      await cleanup().catch((error: unknown) => say(`cleanup: ${String(error)}`));
  }
};

run().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
