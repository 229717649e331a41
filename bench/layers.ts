/**
 * `npm run bench:layers`: what each layer of the order path costs in this process, per order, measured one at a
 * time (CPU time of a loop over the real code, after a warm-up). What a load adds on top — the HTTP stack and
 * express (bare express's CPU per answer, from `npm run bench`), the system calls, the event loop and the garbage
 * collector under 256 connections — is not here: `npm run bench` measures the whole. Prints a table and writes
 * bench/results/layers.json.
 *
 * Knobs: LAYERS_ORDERS (20,000 per layer), LAYERS_BATCH (50: reservations per group commit, messages per
 * produce request, as `npm run bench` sees them).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import mysql from 'mysql2';
import type { Response } from 'express';
import { AnswerRates } from '../src/adapters/http/answer-rates.js';
import { sendProblem } from '../src/adapters/http/problem.js';
import { IdempotencyKeyHeader, PlaceOrderBody } from '../src/adapters/http/schemas.js';
import { API_HEADERS, setHeaders } from '../src/adapters/http/security-headers.js';
import { JwtTokens } from '../src/adapters/http/tokens.js';
import type { Db, MySqlSession } from '../src/adapters/mysql/mysql-session.js';
import { MySqlEventStore } from '../src/adapters/mysql/mysql-event-store.js';
import { MySqlInventory } from '../src/adapters/mysql/mysql-inventory.js';
import { MySqlOrderReadModel } from '../src/adapters/mysql/mysql-order-read-model.js';
import { MySqlOutbox } from '../src/adapters/mysql/mysql-outbox.js';
import { RandomIdGenerator } from '../src/adapters/system/random-id-generator.js';
import { SystemClock } from '../src/adapters/system/system-clock.js';
import {
  commandHandlers,
  messagesOf,
  WriteTransaction,
  type CommandItem,
  type TransactionalStores,
} from '../src/application/index.js';
import type { ReserveOrder } from '../src/domain/index.js';
import { recordsOf } from '../src/adapters/kafka/kafka-packs.js';
import type { Message } from 'kafkajs';
import { prometheusObserver } from '../src/infrastructure/http-observer.js';
import { PrometheusMetrics } from '../src/infrastructure/metrics.js';

const ORDERS = Number(process.env['LAYERS_ORDERS'] ?? '20000');
const BATCH = Number(process.env['LAYERS_BATCH'] ?? '50');
const ROUTE = '/api/v1/seckill/orders';

type Layer = Readonly<{ layer: string; what: string; micros: number }>;

const ROUNDS = 5;
const collect = (globalThis as { gc?: () => void }).gc;

/**
 * CPU µs per call of `work`: after a warm-up of a fifth as many calls, `ROUNDS` rounds of a fifth each, the
 * median round (a collection forced before each when node runs with --expose-gc, so that one layer's garbage is
 * not counted against the next).
 */
const cpuMicros = async (calls: number, work: (i: number) => unknown): Promise<number> => {
  const slice = Math.max(1, Math.floor(calls / ROUNDS));
  for (let i = 0; i < slice; i += 1) await work(i);
  const rounds: number[] = [];
  // each call its own index: work that uses up what it is given (an answer) gets a fresh one
  for (let round = 1; round <= ROUNDS; round += 1) {
    collect?.();
    const before = process.cpuUsage();
    for (let i = round * slice; i < (round + 1) * slice; i += 1) await work(i);
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / slice);
  }
  return rounds.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
};

const round = (micros: number) => Math.round(micros * 10) / 10;

/** A response whose socket takes every write and keeps nothing, as the order route gets it. */
const response = (): Response => {
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  const sink = new Writable({
    write: (_chunk, _encoding, done) => done(),
    writev: (_chunks, done) => done(),
  });
  res.assignSocket(sink as never);
  return res as unknown as Response;
};

/** The three statements a batch of reservations is, formatted by mysql2 as `query` sends them. */
const capturingSession = (): MySqlSession => {
  const sql = {
    query: (text: string, params: readonly unknown[]) => {
      mysql.format(text, params as never);
      return Promise.resolve({ affectedRows: 0, insertId: 0 } as never);
    },
    execute: () => Promise.resolve([] as never),
  };
  return { run: (_what, operation) => operation({ em: null, sql } as unknown as Db) };
};

const reservations = (batch: number, round: number): CommandItem<ReserveOrder>[] =>
  Array.from({ length: batch }, (_, i) => {
    const now = new Date().toISOString();
    const correlationId = randomUUID();
    return {
      command: {
        type: 'ReserveOrder',
        orderId: randomUUID(),
        productId: 42,
        userId: `buyer-${round}-${i}`,
        quantity: 1,
        now,
      },
      context: { occurredAt: now, correlationId, causationId: correlationId, userId: `buyer-${round}-${i}` },
      isNew: true,
    };
  });

const kafkaEncoder = () => {
  const require = createRequire(import.meta.url);
  const produce = require('kafkajs/src/protocol/requests/produce/v7/request') as (args: object) => {
    encode: () => Promise<{ buffer: Buffer }>;
  };
  return (messages: readonly Message[]) =>
    produce({
      acks: -1,
      timeout: 5_000,
      transactionalId: null,
      producerId: { toString: () => '1' },
      producerEpoch: 0,
      compression: 0,
      topicData: [
        {
          topic: 'seckill.orders.reserved',
          partitions: [
            {
              partition: 0,
              firstSequence: 0,
              messages: messages.map((m) => ({ ...m, timestamp: Date.now() })),
            },
          ],
        },
      ],
    }).encode();
};

const main = async () => {
  const layers: Layer[] = [];
  const add = (layer: string, what: string, micros: number) => {
    layers.push({ layer, what, micros: round(micros) });
    process.stderr.write(`[layers] ${layer}: ${round(micros)} µs\n`);
  };

  const secret = `layers-${randomUUID()}`;
  const signer = new JwtTokens(secret);
  const fresh = await Promise.all(
    Array.from({ length: ORDERS }, (_, i) => signer.sign({ userId: `u${i}`, role: 'user' }, 3600)),
  );
  const verifier = new JwtTokens(secret);
  add(
    'JWT',
    'a token not seen before: HS256 and the claims (fast-jwt)',
    await cpuMicros(ORDERS, (i) => verifier.verifySync(`Bearer ${fresh[i % ORDERS]}`)),
  );
  add(
    'JWT',
    'a token verified before (the flood clicks again)',
    await cpuMicros(ORDERS, (i) => verifier.verifySync(`Bearer ${fresh[i % ORDERS]}`)),
  );

  const body = JSON.stringify({ productId: 42, quantity: 1 });
  const key = randomUUID();
  add(
    'validation',
    'the body parsed and checked (JSON.parse, zod), and the Idempotency-Key',
    await cpuMicros(ORDERS, () => {
      PlaceOrderBody.safeParse(JSON.parse(body));
      IdempotencyKeyHeader.safeParse(key);
    }),
  );

  const responses = Array.from({ length: ORDERS + Math.ceil(ORDERS / 5) + 1 }, response);
  add(
    'security headers',
    "helmet's headers on an answer (setHeader each)",
    await cpuMicros(ORDERS, (i) => setHeaders(responses[i]!, API_HEADERS)),
  );
  const problems = Array.from({ length: ORDERS + Math.ceil(ORDERS / 5) + 1 }, response);
  add(
    'HTTP answer',
    "a 409 problem+json written through Node's response to a socket (bare express pays as much for its answer)",
    await cpuMicros(ORDERS, (i) =>
      sendProblem(problems[i]!, { status: 409, code: 'SOLD_OUT', detail: 'product 42 is sold out' }, ROUTE),
    ),
  );

  const metrics = new PrometheusMetrics();
  const observer = prometheusObserver(metrics);
  const rates = new AnswerRates();
  add(
    'metrics',
    'the request counted and timed, the order answer counted (prom-client), the dashboard rate',
    await cpuMicros(ORDERS, () => {
      observer.request('POST', ROUTE, 202, 0.012);
      observer.orderAnswer('RESERVED');
      rates.mark(true);
    }),
  );

  const ids = new RandomIdGenerator();
  add(
    'ids',
    'three UUIDs: the correlation id, the order id, the event id',
    await cpuMicros(ORDERS, () => {
      ids.next();
      ids.next();
      ids.next();
    }),
  );

  const session = capturingSession();
  const stores = {
    events: new MySqlEventStore(session),
    orders: new MySqlOrderReadModel(session),
    outbox: new MySqlOutbox(session),
    inventory: new MySqlInventory(session),
  } satisfies TransactionalStores;
  const { orders: commands } = commandHandlers({
    unitOfWork: { run: (work) => work(stores) },
    ids,
    clock: new SystemClock(),
    dispatcher: { dispatchSoon: () => undefined },
  });
  const batches = Math.ceil(ORDERS / BATCH);
  const prepared = Array.from({ length: batches + Math.ceil(batches / 5) + 1 }, (_, i) =>
    reservations(BATCH, i),
  );
  add(
    'domain',
    "each order's first event decided through the command handler, its outbox message made",
    (await cpuMicros(batches, async (i) => {
      const decisions = await new WriteTransaction(stores, commands).decide(prepared[i]!);
      messagesOf(decisions.flatMap((d) => d.envelopes));
    })) / BATCH,
  );

  const decided = await Promise.all(
    prepared.map((batch) => new WriteTransaction(stores, commands).decide(batch)),
  );
  add(
    'MySQL encode',
    'the three multi-row statements of a group commit (event, order row, outbox row): rows and escaping (mysql2)',
    (await cpuMicros(batches, async (i) => {
      // the batch decided above, handed to the handler as its plan's decisions: only the writes are timed
      await commands.write((tx) => {
        tx.decisions.push(...decided[i]!);
        return Promise.resolve();
      });
    })) / BATCH,
  );

  const encode = kafkaEncoder();
  const outbound = decided.map((decisions) => messagesOf(decisions.flatMap((d) => d.envelopes)));
  add(
    'Kafka encode',
    "a produce request of a batch of reservations, one record per product (a pack, as the publisher sends it): the pack's JSON and kafkajs's record, CRC32C",
    (await cpuMicros(batches, (i) => encode(recordsOf(outbound[i]!)))) / BATCH,
  );
  const oneByOne = outbound.map((messages) =>
    messages.map((m): Message => ({ key: m.key, value: m.payload, headers: { ...m.headers } })),
  );
  add(
    'Kafka encode, one record per message',
    'the same batch as one kafkajs record per message, each with its five headers (how it was sent before packs)',
    (await cpuMicros(batches, (i) => encode(oneByOne[i]!))) / BATCH,
  );

  add('logging', 'lines logged per order at the default level (warn): none', 0);

  // the order path pays the new-token JWT or the repeat, and the pack or the records: the first of each
  const counted = layers.filter(
    (l) =>
      !l.what.includes('verified before') &&
      !l.layer.includes('one record per message') &&
      l.layer !== 'HTTP answer',
  );
  const total = counted.reduce((n, l) => n + l.micros, 0);
  const result = {
    measuredAt: new Date().toISOString(),
    node: process.version,
    orders: ORDERS,
    batch: BATCH,
    layers,
    sumMicros: round(total),
  };
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/layers.json', `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(
    [
      `per order, CPU µs in this process (${ORDERS} orders per layer, batches of ${BATCH}):`,
      ...layers.map((l) => `  ${l.micros.toFixed(1).padStart(6)}  ${l.layer}: ${l.what}`),
      `  ${result.sumMicros.toFixed(1).padStart(6)}  what the service adds to bare express's answer (a new token, a pack; not the answer itself)`,
      '',
    ].join('\n'),
  );
};

await main();
