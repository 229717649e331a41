import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/mysql';
import { migrate, openMySql, type MySqlOptions } from '../../src/adapters/mysql/mysql-orm.js';

export const mysqlServerUrl = (): string =>
  process.env['SECKILL_TEST_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306';

export type TestDatabase = Readonly<{ orm: MikroORM; url: string; name: string; drop: () => Promise<void> }>;

/** A database of its own for one test run, created and migrated by the adapter itself, dropped afterwards. */
export const createTestDatabase = async (options: Partial<MySqlOptions> = {}): Promise<TestDatabase> => {
  const name = `seckill_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const url = `${mysqlServerUrl()}/${name}`;
  const orm = await openMySql({ url, ...options });
  await migrate(orm);
  return {
    orm,
    url,
    name,
    drop: async () => {
      await orm.em.getConnection().execute(`DROP DATABASE IF EXISTS \`${name}\``);
      await orm.close(true);
    },
  };
};

/** Empties every table between tests that need a clean slate. */
export const emptyTables = async (orm: MikroORM): Promise<void> => {
  const connection = orm.em.getConnection();
  for (const table of ['outbox_message', 'orders', 'product', 'event_store'])
    await connection.execute(`DELETE FROM ${table}`);
};
