import { MikroORM } from '@mikro-orm/mysql';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from './mysql-schema.js';
import { Migration20261202000000 } from './migrations/Migration20261202000000.js';
import { Migration20261203000000 } from './migrations/Migration20261203000000.js';
import { Migration20261204000000 } from './migrations/Migration20261204000000.js';

export type MySqlOptions = Readonly<{
  /** mysql://user:password@host:port/database */
  url: string;
  poolMin?: number;
  poolMax?: number;
  /** opening a connection to a server that does not answer fails after this */
  connectTimeoutMs?: number;
  /** waiting for a free connection fails after this (a pool whose connections hang is not waited on forever) */
  acquireTimeoutMs?: number;
  /** a unit of work or a read that takes longer fails with the unavailable error */
  operationTimeoutMs?: number;
}>;

export const MIGRATIONS = [
  { name: 'Migration20261202000000', class: Migration20261202000000 },
  { name: 'Migration20261203000000', class: Migration20261203000000 },
  { name: 'Migration20261204000000', class: Migration20261204000000 },
];

/** Opens MikroORM on MariaDB/MySQL. The database named in the URL is created when it does not exist. */
export const openMySql = async (options: MySqlOptions): Promise<MikroORM> => {
  const url = new URL(options.url);
  const dbName = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'seckill';
  return MikroORM.init({
    clientUrl: `${url.protocol}//${url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : ''}${url.host}`,
    dbName,
    entities: ENTITIES,
    extensions: [Migrator],
    // MySQL commits DDL implicitly: a migration cannot be rolled back as a whole, so none pretends to be
    migrations: { migrationsList: MIGRATIONS, transactional: false, allOrNothing: false, silent: true },
    forceUtcTimezone: true,
    timezone: '+00:00',
    ensureDatabase: true,
    discovery: { warnWhenNoEntities: false },
    debug: false,
    pool: {
      min: options.poolMin ?? 2,
      max: options.poolMax ?? 20,
      acquireTimeoutMillis: options.acquireTimeoutMs ?? 2_000,
      createTimeoutMillis: options.connectTimeoutMs ?? 2_000,
    },
    driverOptions: {
      connection: {
        connectTimeout: options.connectTimeoutMs ?? 2_000,
        // only the hot statements of a fixed shape are prepared (mysql-sql.ts): a handful per connection
        maxPreparedStatements: 64,
      },
      acquireConnectionTimeout: options.acquireTimeoutMs ?? 2_000,
    },
  });
};

/** Applies every pending migration; answers the names applied. */
export const migrate = async (orm: MikroORM): Promise<string[]> => {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
};
