import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MikroORM } from '@mikro-orm/mysql';
import { mysqlServerUrl } from '../support/mysql-database.js';

const run = promisify(execFile);
const database = `seckill_migrate_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const cli = (...args: string[]) =>
  run('node', ['dist/src/infrastructure/main.js', ...args], {
    env: {
      ...process.env,
      SECKILL_MYSQL_URL: `${mysqlServerUrl()}/${database}`,
      SECKILL_LOG_LEVEL: 'silent',
    },
  });

describe('npx seckill migrate on an empty server', () => {
  let admin: MikroORM;

  beforeAll(async () => {
    admin = await MikroORM.init({
      clientUrl: mysqlServerUrl(),
      dbName: 'information_schema',
      entities: [],
      discovery: { warnWhenNoEntities: false },
      ensureDatabase: false,
    });
  });

  afterAll(async () => {
    await admin.em.getConnection().execute(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.close(true);
  });

  const query = <T>(sql: string, params: unknown[] = []) =>
    admin.em.getConnection().execute<T[]>(sql, params);

  it('creates the database and the schema, then finds nothing more to do', async () => {
    const first = await cli('migrate');
    expect(first.stdout).toContain('applied: Migration20261202000000');

    const tables = await query<{ TABLE_NAME: string }>(
      'SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME',
      [database],
    );
    expect(tables.map((t) => t.TABLE_NAME)).toEqual(
      expect.arrayContaining(['event_store', 'orders', 'outbox_message', 'product']),
    );

    const indexes = await query<{
      TABLE_NAME: string;
      INDEX_NAME: string;
      NON_UNIQUE: number;
      columns: string;
    }>(
      `SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS columns
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? GROUP BY TABLE_NAME, INDEX_NAME, NON_UNIQUE`,
      [database],
    );
    const index = (table: string, columns: string) =>
      indexes.find((i) => i.TABLE_NAME === table && i.columns === columns);
    expect(index('event_store', 'stream_id,stream_version')).toMatchObject({ NON_UNIQUE: 0 });
    expect(index('event_store', 'position')).toMatchObject({ INDEX_NAME: 'PRIMARY' });
    expect(index('outbox_message', 'message_id')).toMatchObject({ NON_UNIQUE: 0 });
    expect(index('outbox_message', 'status,created_at')).toMatchObject({ NON_UNIQUE: 1 });

    const columns = await query<{ TABLE_NAME: string; COLUMN_NAME: string; EXTRA: string }>(
      'SELECT TABLE_NAME, COLUMN_NAME, EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?',
      [database],
    );
    const has = (table: string, column: string) =>
      columns.find((c) => c.TABLE_NAME === table && c.COLUMN_NAME === column);
    expect(has('event_store', 'position')?.EXTRA).toContain('auto_increment');
    for (const column of [
      'stock',
      'version',
      'per_user_limit',
      'max_per_order',
      'sale_starts_at',
      'sale_ends_at',
    ])
      expect(has('product', column)).toBeDefined();
    for (const column of [
      'order_id',
      'user_id',
      'product_id',
      'quantity',
      'status',
      'reason',
      'reserved_at',
      'updated_at',
    ])
      expect(has('orders', column)).toBeDefined();
    for (const column of [
      'message_id',
      'order_id',
      'topic',
      'key',
      'payload',
      'status',
      'attempts',
      'last_error',
      'created_at',
      'updated_at',
    ])
      expect(has('outbox_message', column)).toBeDefined();

    const second = await cli('migrate');
    expect(second.stdout).toContain('the schema is up to date');
  });
});
