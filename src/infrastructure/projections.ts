import { MySqlEventStore } from '../adapters/mysql/mysql-event-store.js';
import { openMySql } from '../adapters/mysql/mysql-orm.js';
import { MySqlOrderProjectionRebuild } from '../adapters/mysql/mysql-projection-rebuild.js';
import { standaloneSession } from '../adapters/mysql/mysql-session.js';
import { RebuildProjections, type RebuildReport } from '../application/index.js';
import { type Config, ConfigError } from './config.js';

/**
 * `seckill projections rebuild`: replays MySQL's event store into fresh `orders` tables and compares them
 * with the live ones. Only MySQL is needed. `swap` puts the rebuilt table in place: stop the service first,
 * or writes made meanwhile land in the table being replaced.
 */
export const rebuildProjections = async (
  config: Config,
  options: Readonly<{ resume?: boolean; swap?: boolean; pageSize?: number }>,
): Promise<RebuildReport> => {
  if (config.profile !== 'real')
    throw new ConfigError(
      'projections live in MySQL: set SECKILL_PROFILE=real (the memory profile keeps none)',
    );
  const orm = await openMySql({ url: config.mysqlUrl, ...config.mysql });
  try {
    const timeoutMs = Math.max(config.mysql.operationTimeoutMs, 30_000);
    return await new RebuildProjections({
      events: new MySqlEventStore(standaloneSession(orm, timeoutMs)),
      target: new MySqlOrderProjectionRebuild(orm, timeoutMs),
      pageSize: options.pageSize ?? 5_000,
    }).run(options);
  } finally {
    await orm.close(true);
  }
};
