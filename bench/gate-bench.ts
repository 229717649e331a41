/**
 * `npm run bench:gate`: how many gate reservations per second the Redis adapter gets through, next to
 * redis-benchmark running the very same Lua script by EVALSHA against the same server in the same run; and
 * the Redis part of placing an order (the gate's one script with the buyer's budget, lock and key, then the
 * unlock) with ioredis auto-pipelining on and off, in alternating rounds. Prints the figures and the ratios, and writes
 * bench/results/gate.json.
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
    '8',
    keys.stock,
    keys.users,
    keys.orders,
    // lock, key, budgets and path token: not asked
    ...Array.from({ length: 5 }, () => keys.unused),
    'user:__rand_int__',
    'order:__rand_int__',
    '1',
    String(HUGE),
    ...Array.from({ length: 6 }, () => '0'),
    '0',
    '0',
  ]);
  const match = /([\d.]+) requests per second/.exec(stdout);
  if (!match?.[1]) throw new Error(`cannot read redis-benchmark output: ${stdout}`);
  return Number(match[1]);
};

const dropKeys = async (client: RedisClient, ...keys: string[]) => {
  for (const key of keys) await client.del(key);
};

const ORDERS = Number(process.env['BENCH_ORDERS'] ?? 30_000);

type Admission = Readonly<{
  ordersPerSec: number;
  /** this process: ioredis and the adapters */
  cpuMicrosPerOrder: number;
  /** the Redis server (INFO cpu), which shares the machine's cores */
  redisCpuMicrosPerOrder: number;
}>;

/** The Redis server's CPU seconds so far (user + system), from INFO cpu. */
const redisCpuSeconds = async (client: RedisClient): Promise<number> => {
  const info = await client.info('cpu');
  const read = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return read('used_cpu_user') + read('used_cpu_sys');
};

/**
 * ORDERS orders' Redis calls, CONCURRENCY at a time, as PlaceOrder makes them: the gate's script with the
 * buyer's budget, lock and key, then the unlock. Every order is a new buyer, so every call does its full work.
 */
const admissionRound = async (client: RedisClient, namespace: string, round: string): Promise<Admission> => {
  const gate = new RedisStockGate(client, namespace);
  let next = 0;
  const redisBefore = await redisCpuSeconds(client);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ORDERS) {
        const i = next++;
        const userId = `${round}-u${i}`;
        const orderId = `${round}-o${i}`;
        const answer = await gate.reserve({
          productId: 3,
          orderId,
          userId,
          quantity: 1,
          perUserLimit: HUGE,
          idempotency: { key: orderId, ttlMs: 60_000 },
          lock: { owner: orderId, leaseMs: 5_000 },
          budgets: [{ scope: 'buyer', id: userId, points: HUGE, windowMs: 60_000 }],
        });
        if (!answer.ok) throw new Error(`unexpected gate answer ${JSON.stringify(answer)}`);
        await gate.unlock(3, userId, orderId);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const redisUsed = (await redisCpuSeconds(client)) - redisBefore;
  return {
    ordersPerSec: Math.round(ORDERS / seconds),
    cpuMicrosPerOrder: Math.round((used.user + used.system) / ORDERS),
    redisCpuMicrosPerOrder: Math.round((redisUsed * 1e6) / ORDERS),
  };
};

/** The admission path with auto-pipelining on and off, alternating (off, on, on, off, …), medians. */
const autoPipelining = async (namespace: string) => {
  const clients = {
    on: connectRedis({ url: url.toString(), commandTimeoutMs: 10_000, autoPipelining: true }),
    off: connectRedis({ url: url.toString(), commandTimeoutMs: 10_000, autoPipelining: false }),
  };
  try {
    await new RedisStockGate(clients.on, namespace).warm(3, HUGE, { force: true });
    const rounds: Record<'on' | 'off', Admission[]> = { on: [], off: [] };
    await admissionRound(clients.on, namespace, 'warm-on');
    await admissionRound(clients.off, namespace, 'warm-off');
    for (let round = 0; round < ROUNDS; round += 1)
      for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const))
        rounds[mode].push(await admissionRound(clients[mode], namespace, `${mode}${round}`));
    const summary = (mode: 'on' | 'off') => ({
      ordersPerSec: Math.round(median(rounds[mode].map((r) => r.ordersPerSec))),
      cpuMicrosPerOrder: Math.round(median(rounds[mode].map((r) => r.cpuMicrosPerOrder))),
      redisCpuMicrosPerOrder: Math.round(median(rounds[mode].map((r) => r.redisCpuMicrosPerOrder))),
      rounds: rounds[mode],
    });
    return { on: summary('on'), off: summary('off') };
  } finally {
    await Promise.all([clients.on.quit(), clients.off.quit()]);
  }
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
    const admission = await autoPipelining(namespace);
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
      admission: {
        orders: ORDERS,
        autoPipeliningOn: admission.on,
        autoPipeliningOff: admission.off,
        speedup: Number((admission.on.ordersPerSec / admission.off.ordersPerSec).toFixed(2)),
        cpuRatio: Number((admission.on.cpuMicrosPerOrder / admission.off.cpuMicrosPerOrder).toFixed(2)),
        redisCpuRatio: Number(
          (admission.on.redisCpuMicrosPerOrder / Math.max(1, admission.off.redisCpuMicrosPerOrder)).toFixed(
            2,
          ),
        ),
      },
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
        `order admission (the gate's script with budget, lock and key, then the unlock), ${ORDERS} orders × ${ROUNDS} rounds, ${CONCURRENCY} in flight:`,
        `  auto-pipelining off  ${admission.off.ordersPerSec.toLocaleString('en')} orders/s, ${admission.off.cpuMicrosPerOrder} µs of Node CPU and ${admission.off.redisCpuMicrosPerOrder} µs of Redis CPU per order`,
        `  auto-pipelining on   ${admission.on.ordersPerSec.toLocaleString('en')} orders/s, ${admission.on.cpuMicrosPerOrder} µs of Node CPU and ${admission.on.redisCpuMicrosPerOrder} µs of Redis CPU per order`,
        `  on / off             × ${result.admission.speedup} orders/s, × ${result.admission.cpuRatio} Node CPU, × ${result.admission.redisCpuRatio} Redis CPU per order`,
        '',
      ].join('\n'),
    );
  } finally {
    await dropKeys(client, ...Object.values(adapterKeys), ...Object.values(baselineKeys));
    // the admission rounds' keys: the product's gate, and one key record and budget per buyer
    let cursor = '0';
    do {
      const [nextCursor, keys] = await client.scan(cursor, 'MATCH', `*${namespace}*`, 'COUNT', 1_000);
      cursor = nextCursor;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
    await client.quit();
  }
};

await main();
