/**
 * The commit consumer without HTTP or Kafka: the real `CommitReservations` use case on `MySqlUnitOfWork`,
 * draining a backlog of synthetic reservations written in bulk, fed in batches per partition as Kafka would.
 * A fresh database per run; committed orders per second, with or without merged decrements.
 */
import { randomUUID } from 'node:crypto';
import { type Connection, createConnection } from 'mysql2/promise';
import { migrate, openMySql } from '../../src/adapters/mysql/mysql-orm.js';
import { MySqlOutbox } from '../../src/adapters/mysql/mysql-outbox.js';
import { standaloneSession } from '../../src/adapters/mysql/mysql-session.js';
import { MySqlUnitOfWork } from '../../src/adapters/mysql/mysql-unit-of-work.js';
import { SystemClock } from '../../src/adapters/system/system-clock.js';
import {
  CommitReservations,
  type InboundMessage,
  type Logger,
  type Metrics,
  type NewOutboxMessage,
  OutboxDispatcher,
  commandHandlers,
  OutboxStatus,
  reservedMessage,
} from '../../src/application/index.js';
import { count, databaseUrl, statementCounters } from './mysql.js';

export type ConsumerOptions = Readonly<{
  /** reservations in the backlog */
  orders: number;
  /** products, one partition each */
  products: number;
  /** messages per batch (one `handle` call) */
  batch: number;
  /** partitions handled at once (the service's SECKILL_KAFKA_CONCURRENCY) */
  concurrency: number;
}>;

export type ConsumerRun = Readonly<{
  mergeDecrements: boolean;
  orders: number;
  committed: number;
  seconds: number;
  perSec: number;
  /** SELECT + INSERT + UPDATE + DELETE statements the server ran per order (global counters: approximate) */
  statementsPerOrder: number;
}>;

const CHUNK = 1_000;
const STOCK = 1_000_000;
const TRANSACTION_TIMEOUT_MS = 60_000;

const sqlTime = (iso: string) => iso.replace('T', ' ').replace('Z', '');

const insertRows = async (db: Connection, table: string, columns: string[], rows: unknown[][]) => {
  const names = columns.map((c) => `\`${c}\``).join(', ');
  for (let i = 0; i < rows.length; i += CHUNK)
    await db.query(`INSERT INTO ${table} (${names}) VALUES ?`, [rows.slice(i, i + CHUNK)]);
};

type Reservation = Readonly<{
  productId: number;
  userId: string;
  reservedAt: string;
  message: NewOutboxMessage;
}>;

/** What `PlaceOrder.record` writes for each reservation (event, orders row, outbox row), in bulk. */
const seed = async (db: Connection, runId: string, options: ConsumerOptions): Promise<Reservation[]> => {
  const productIds: number[] = [];
  for (let p = 0; p < options.products; p++) {
    await db.query(
      'INSERT INTO product (name, stock, version, per_user_limit, max_per_order) VALUES (?, ?, 0, ?, 1)',
      [`consumer bench ${p}`, STOCK, 10_000],
    );
    productIds.push(await count(db, 'SELECT LAST_INSERT_ID()'));
  }
  const reservedAt = new Date().toISOString();
  const reservations: Reservation[] = Array.from({ length: options.orders }, (_, i) => {
    const orderId = randomUUID();
    const productId = productIds[i % productIds.length]!;
    const userId = `bench-${runId}-${i}`;
    const message = reservedMessage({
      eventId: randomUUID(),
      schemaVersion: 1,
      occurredAt: reservedAt,
      correlationId: `bench-${runId}`,
      causationId: `bench-${runId}`,
      userId,
      event: { type: 'OrderReserved', data: { orderId, productId, userId, quantity: 1, reservedAt } },
    });
    return { productId, userId, reservedAt, message };
  });
  const at = sqlTime(reservedAt);
  await insertRows(
    db,
    'event_store',
    [
      'event_id',
      'stream_id',
      'stream_version',
      'type',
      'payload',
      'metadata',
      'correlation_id',
      'occurred_at',
    ],
    reservations.map((r) => [
      randomUUID(),
      `order-${r.message.orderId}`,
      1,
      'OrderReserved',
      JSON.stringify({
        orderId: r.message.orderId,
        productId: r.productId,
        userId: r.userId,
        quantity: 1,
        reservedAt: r.reservedAt,
      }),
      JSON.stringify({ userId: r.userId }),
      `bench-${runId}`,
      at,
    ]),
  );
  await insertRows(
    db,
    'orders',
    ['order_id', 'user_id', 'product_id', 'quantity', 'status', 'reason', 'reserved_at', 'updated_at'],
    reservations.map((r) => [r.message.orderId, r.userId, r.productId, 1, 'RESERVED', null, at, at]),
  );
  await insertRows(
    db,
    'outbox_message',
    [
      'message_id',
      'order_id',
      'topic',
      'key',
      'payload',
      'headers',
      'status',
      'attempts',
      'created_at',
      'updated_at',
    ],
    reservations.map((r) => {
      const m = r.message;
      return [
        m.messageId,
        m.orderId,
        m.topic,
        m.key,
        m.payload,
        JSON.stringify(m.headers),
        OutboxStatus.SENT,
        1,
        at,
        at,
      ];
    }),
  );
  return reservations;
};

const chunks = <T>(items: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/** Takes one item of each queue in turn, as a consumer fetching from several partitions does. */
const interleave = <T>(queues: readonly T[][]): T[] => {
  const out: T[] = [];
  for (let round = 0; queues.some((q) => round < q.length); round++)
    for (const q of queues) if (round < q.length) out.push(q[round]!);
  return out;
};

/** Kafka's view: one partition per product, offsets in order, cut into batches; lanes share the partitions. */
const lanesOf = (reservations: readonly Reservation[], options: ConsumerOptions): InboundMessage[][][] => {
  const byProduct = new Map<number, Reservation[]>();
  for (const r of reservations) {
    const list = byProduct.get(r.productId) ?? [];
    list.push(r);
    byProduct.set(r.productId, list);
  }
  const lanes: InboundMessage[][][][] = Array.from({ length: options.concurrency }, () => []);
  [...byProduct.values()].forEach((list, partition) => {
    const messages = list.map(({ message: { topic, key, payload, headers } }, offset) => ({
      topic,
      key,
      payload,
      headers,
      partition,
      offset: String(offset),
    }));
    lanes[partition % options.concurrency]!.push(chunks(messages, options.batch));
  });
  return lanes.map((partitions) => interleave(partitions));
};

const quietMetrics: Metrics = { count: () => undefined, gauge: () => undefined };

const stderrLogger = (): Logger & { errors: () => number } => {
  let errors = 0;
  const write = (level: string) => (details: object, message: string) => {
    if (level === 'error') errors++;
    if (level !== 'info')
      process.stderr.write(`consumer bench ${level}: ${message} ${JSON.stringify(details)}\n`);
  };
  return { info: write('info'), warn: write('warn'), error: write('error'), errors: () => errors };
};

/**
 * One run: a fresh database `name` (created and migrated by the adapter itself), a backlog of
 * `options.orders` reservations, drained by `CommitReservations` with or without merged decrements.
 */
export const consumerRun = async (
  name: string,
  mergeDecrements: boolean,
  options: ConsumerOptions,
  admin: Connection,
  /** wraps the timed part (the drain), e.g. to sample the CPU around it */
  timed: (drain: () => Promise<void>) => Promise<void> = (drain) => drain(),
): Promise<ConsumerRun> => {
  const url = databaseUrl(name);
  const orm = await openMySql({ url, poolMax: 10, operationTimeoutMs: TRANSACTION_TIMEOUT_MS });
  const db = await createConnection({ uri: url });
  try {
    await migrate(orm);
    const reservations = await seed(db, name, options);
    const clock = new SystemClock();
    const logger = stderrLogger();
    const outbox = new MySqlOutbox(standaloneSession(orm, TRANSACTION_TIMEOUT_MS));
    const publisher = { publish: () => Promise.resolve(), publishMany: () => Promise.resolve() };
    const dispatcher = new OutboxDispatcher(outbox, publisher, clock, logger, quietMetrics);
    const { orders } = commandHandlers({
      unitOfWork: new MySqlUnitOfWork(orm, TRANSACTION_TIMEOUT_MS),
      ids: { next: randomUUID },
      clock,
      dispatcher,
    });
    const commit = new CommitReservations({
      orders,
      clock,
      logger,
      metrics: quietMetrics,
      mergeDecrements,
    });
    const lanes = lanesOf(reservations, options);
    const before = await statementCounters(admin);
    const started = performance.now();
    await timed(async () => {
      await Promise.all(
        lanes.map(async (batches) => {
          for (const batch of batches) await commit.handle(batch);
        }),
      );
    });
    const seconds = (performance.now() - started) / 1000;
    const statements = (await statementCounters(admin)) - before;
    await dispatcher.settle();
    const committed = await count(db, "SELECT COUNT(*) FROM orders WHERE status = 'COMMITTED'");
    const stock = await count(db, 'SELECT SUM(stock) FROM product');
    if (
      committed !== options.orders ||
      stock !== STOCK * options.products - options.orders ||
      logger.errors() > 0
    )
      throw new Error(
        `consumer run ${name}: ${committed}/${options.orders} committed, stock ${stock}, ${logger.errors()} error(s)`,
      );
    return {
      mergeDecrements,
      orders: options.orders,
      committed,
      seconds,
      perSec: Math.round(committed / seconds),
      statementsPerOrder: Number((statements / options.orders).toFixed(2)),
    };
  } finally {
    await db.end();
    await orm.close(true);
  }
};
