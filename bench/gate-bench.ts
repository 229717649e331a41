/**
 * `npm run bench:gate`: how many gate reservations per second the Redis adapter gets through, next to
 * redis-benchmark running the very same Lua script by EVALSHA against the same server in the same run.
 * Prints the figures and the ratio, and writes bench/results/gate.json.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { connectRedis, type RedisClient } from '../src/adapters/redis/redis-connection.js';
import { GATE_SCRIPTS, gateKeys, RedisStockGate } from '../src/adapters/redis/redis-stock-gate.js';

const run = promisify(execFile);
const url = new URL(process.env['SECKILL_REDIS_URL'] ?? 'redis://127.0.0.1:6379');
const CALLS = Number(process.env['BENCH_CALLS'] ?? 100_000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 50);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const HUGE = 1_000_000_000;

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** CALLS reservations with CONCURRENCY in flight on one connection, each for a new buyer and order. */
const adapterRound = async (gate: RedisStockGate, round: number): Promise<number> => {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS) {
        const i = next++;
        const answer = await gate.reserve({
          productId: 1,
          orderId: `r${round}-o${i}`,
          userId: `r${round}-u${i}`,
          quantity: 1,
          perUserLimit: HUGE,
        });
        if (!answer.ok) throw new Error(`unexpected gate answer ${JSON.stringify(answer)}`);
      }
    }),
  );
  return CALLS / ((performance.now() - started) / 1000);
};

/**
 * The same script, by SHA, from redis-benchmark with random buyers and orders: either CONCURRENCY connections
 * with one call each in flight, or one connection with CONCURRENCY calls pipelined (the adapter's shape).
 */
const redisBenchmarkRound = async (
  sha: string,
  keys: ReturnType<typeof gateKeys>,
  shape: 'connections' | 'pipelined',
): Promise<number> => {
  const { stdout } = await run('redis-benchmark', [
    '-h',
    url.hostname,
    '-p',
    url.port || '6379',
    '-n',
    String(CALLS),
    ...(shape === 'connections' ? ['-c', String(CONCURRENCY)] : ['-c', '1', '-P', String(CONCURRENCY)]),
    '-r',
    '100000000000',
    '-q',
    'EVALSHA',
    sha,
    '3',
    keys.stock,
    keys.users,
    keys.orders,
    'user:__rand_int__',
    'order:__rand_int__',
    '1',
    String(HUGE),
  ]);
  const match = /([\d.]+) requests per second/.exec(stdout);
  if (!match?.[1]) throw new Error(`cannot read redis-benchmark output: ${stdout}`);
  return Number(match[1]);
};

const dropKeys = async (client: RedisClient, ...keys: string[]) => {
  for (const key of keys) await client.del(key);
};

const main = async () => {
  const namespace = `bench-${randomUUID()}:`;
  const client = connectRedis({ url: url.toString(), commandTimeoutMs: 10_000 });
  const gate = new RedisStockGate(client, namespace);
  const adapterKeys = gateKeys(namespace, 1);
  const baselineKeys = gateKeys(namespace, 2);
  try {
    await gate.warm(1, HUGE, { force: true });
    await gate.warm(2, HUGE, { force: true });
    const sha = String(await client.script('LOAD', GATE_SCRIPTS.RESERVE));
    const adapter: number[] = [];
    const baseline: number[] = [];
    const pipelined: number[] = [];
    await adapterRound(gate, -1); // warm-up: JIT, connection, script cache
    for (let round = 0; round < ROUNDS; round += 1) {
      baseline.push(await redisBenchmarkRound(sha, baselineKeys, 'connections'));
      pipelined.push(await redisBenchmarkRound(sha, baselineKeys, 'pipelined'));
      adapter.push(await adapterRound(gate, round));
    }
    const result = {
      measuredAt: new Date().toISOString(),
      redis: url.host,
      calls: CALLS,
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      adapterCallsPerSec: Math.round(median(adapter)),
      redisBenchmarkEvalshaPerSec: Math.round(median(baseline)),
      redisBenchmarkPipelinedPerSec: Math.round(median(pipelined)),
      ratio: Number((median(adapter) / median(baseline)).toFixed(2)),
      ratioToPipelined: Number((median(adapter) / median(pipelined)).toFixed(2)),
      adapterRounds: adapter.map(Math.round),
      redisBenchmarkRounds: baseline.map(Math.round),
      redisBenchmarkPipelinedRounds: pipelined.map(Math.round),
    };
    await mkdir('bench/results', { recursive: true });
    await writeFile('bench/results/gate.json', `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(
      [
        `gate reservations: ${CALLS} calls × ${ROUNDS} rounds, ${CONCURRENCY} in flight, Redis ${url.host}`,
        `  RedisStockGate (ioredis, 1 connection)    ${result.adapterCallsPerSec.toLocaleString('en')} calls/s  rounds ${result.adapterRounds.join(', ')}`,
        `  redis-benchmark EVALSHA (${CONCURRENCY} connections)  ${result.redisBenchmarkEvalshaPerSec.toLocaleString('en')} calls/s  rounds ${result.redisBenchmarkRounds.join(', ')}`,
        `  redis-benchmark EVALSHA (1 connection, -P ${CONCURRENCY})  ${result.redisBenchmarkPipelinedPerSec.toLocaleString('en')} calls/s  rounds ${result.redisBenchmarkPipelinedRounds.join(', ')}`,
        `  ratio adapter / redis-benchmark ${CONCURRENCY} connections  ${result.ratio}`,
        `  ratio adapter / redis-benchmark pipelined      ${result.ratioToPipelined}`,
        '',
      ].join('\n'),
    );
  } finally {
    await dropKeys(client, ...Object.values(adapterKeys), ...Object.values(baselineKeys));
    await client.quit();
  }
};

await main();
