/**
 * `npm run bench:streams`: what open order event streams cost MySQL. The service on the real profile (`seckill
 * serve`, one Kafka node, a fresh database and Redis namespace), 2,000 buyers each with one order; then streams
 * opened, one per buyer, in steps of 100, 1,000 and 2,000, and at each step MariaDB's SELECTs per second
 * (`Com_select`, the server's own counter) over a few seconds, next to the same count with no stream open.
 * Prints the figures and writes bench/results/streams.json.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { Agent, get, type ClientRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { RowDataPacket } from 'mysql2/promise';
import { JwtTokens } from '../src/adapters/http/tokens.js';
import { SERVICE_NODE_FLAGS } from '../src/infrastructure/node-flags.js';
import { startBenchBroker } from './lib/broker.js';
import { createDatabase, databaseUrl, dropDatabase, openAdmin } from './lib/mysql.js';
import { answers200, freePort, runNode, startNode } from './lib/processes.js';
import { ADMISSION_OFF, call, dropNamespace, listProduct, serviceEnv } from './lib/service.js';

const MAIN = fileURLToPath(new URL('../src/infrastructure/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUYERS = 2_000;
const STEPS = [0, 100, 1_000, 2_000] as const;
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const POLL_MS = 250;

const say = (line: string) => process.stdout.write(`[streams] ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const run = async () => {
  const id = randomUUID().slice(0, 8);
  const secret = `bench-${randomUUID()}-${randomUUID()}`;
  const db = `seckill_bench_streams_${id}`;
  const namespace = `bench-streams-${id}:`;
  const cleanups: Array<() => Promise<unknown>> = [];
  const admin = await openAdmin();
  cleanups.push(() => admin.end());
  const selects = async (): Promise<number> => {
    const [rows] = await admin.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Com_select'");
    return Number(rows[0]?.['Value'] ?? 0);
  };
  try {
    const kafka = await startBenchBroker(say, false, 1);
    cleanups.unshift(() => kafka.stop());
    await createDatabase(admin, db);
    cleanups.unshift(() => dropDatabase(admin, db));
    cleanups.unshift(() => dropNamespace(namespace));
    const env = serviceEnv({
      secret,
      mysqlUrl: databaseUrl(db),
      namespace,
      brokers: kafka.brokers,
      admission: ADMISSION_OFF,
      extra: {
        ...kafka.env,
        SECKILL_ORDER_EVENTS_POLL_MS: String(POLL_MS),
        // the buyers' orders stay as they are (no worker commits them): every stream stays open
        SECKILL_ORDER_EVENTS_MAX: String(BUYERS),
      },
    });
    await runNode(MAIN, ['migrate'], env);
    const port = await freePort();
    const api = startNode(
      'seckill serve',
      MAIN,
      ['serve'],
      { ...env, PORT: String(port) },
      { nodeArgs: SERVICE_NODE_FLAGS },
    );
    cleanups.unshift(() => api.stop());
    const base = `http://127.0.0.1:${port}`;
    await answers200(api, `${base}/readyz`);

    const tokens = new JwtTokens(secret);
    const adminToken = await tokens.sign({ userId: 'bench-admin', role: 'admin' });
    const productId = await listProduct(base, adminToken, 'bench streams', BUYERS, 1);
    const buyers = await Promise.all(
      Array.from({ length: BUYERS }, async (_, i) => tokens.sign({ userId: `watcher-${i}`, role: 'user' })),
    );
    const orders: string[] = [];
    for (let i = 0; i < BUYERS; i += 50) {
      const placed = await Promise.all(
        buyers
          .slice(i, i + 50)
          .map((token) => call(`${base}/api/v1/seckill/orders`, token, { productId, quantity: 1 })),
      );
      for (const answer of placed) {
        const orderId = (answer.body as { orderId?: string } | null)?.orderId;
        if (answer.status !== 202 || !orderId) throw new Error(`an order answered ${answer.status}`);
        orders.push(orderId);
      }
    }
    say(`${orders.length} orders placed`);

    const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
    const open: ClientRequest[] = [];
    cleanups.unshift(() => {
      for (const request of open) request.destroy();
      agent.destroy();
      return Promise.resolve();
    });
    const openStream = (i: number) =>
      new Promise<void>((resolve, reject) => {
        const request = get(
          `${base}/api/v1/orders/${orders[i]}/events`,
          { agent, headers: { authorization: `Bearer ${buyers[i]}`, accept: 'text/event-stream' } },
          (response) => {
            if (response.statusCode !== 200) reject(new Error(`stream ${i} answered ${response.statusCode}`));
            // the first event, the order as it stands, says the stream is open
            response.once('data', () => resolve());
          },
        );
        request.on('error', reject);
        open.push(request);
      });

    const steps: Array<{ streams: number; selectsPerSecond: number }> = [];
    for (const streams of STEPS) {
      for (let i = open.length; i < streams; i += 100)
        await Promise.all(Array.from({ length: Math.min(100, streams - i) }, (_, j) => openStream(i + j)));
      // a few rounds of the poller before counting
      await sleep(4 * POLL_MS);
      const before = await selects();
      const startedAt = performance.now();
      await sleep(SECONDS * 1_000);
      const selectsPerSecond = ((await selects()) - before) / ((performance.now() - startedAt) / 1_000);
      steps.push({ streams, selectsPerSecond: Math.round(selectsPerSecond * 10) / 10 });
      say(`${streams} streams open: ${selectsPerSecond.toFixed(1)} SELECTs/s in MariaDB`);
    }
    const idle = steps[0]!.selectsPerSecond;
    const at100 = steps[1]!.selectsPerSecond - idle;
    const result = {
      startedAt: new Date().toISOString(),
      pollMs: POLL_MS,
      seconds: SECONDS,
      steps,
      /** SELECTs per second the streams add, at each step, over the count with none open */
      addedByStreams: steps.map((s) => ({
        streams: s.streams,
        selectsPerSecond: Math.round((s.selectsPerSecond - idle) * 10) / 10,
      })),
      /** what 2,000 streams add over what 100 add: 1 is flat */
      ratio2000to100:
        at100 > 0 ? Math.round(((steps[3]!.selectsPerSecond - idle) / at100) * 100) / 100 : null,
    };
    await mkdir(`${ROOT}bench/results`, { recursive: true });
    await writeFile(`${ROOT}bench/results/streams.json`, `${JSON.stringify(result, null, 2)}\n`);
    say(
      `wrote bench/results/streams.json: ${JSON.stringify(result.addedByStreams)}, 2,000 / 100 = ${result.ratio2000to100}`,
    );
  } finally {
    for (const cleanup of cleanups)
      await cleanup().catch((error: unknown) => say(`cleanup: ${String(error)}`));
  }
};

await run();
