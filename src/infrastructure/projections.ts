import { type RebuildProjections, type RebuildReport } from '../application/index.js';
import { type Config, ConfigError } from './config.js';
import { buildContainer, REBUILD } from './container.js';
import type { AppLogger } from './logger.js';
import { PrometheusMetrics } from './metrics.js';
import { openMySqlResources } from './real-resources.js';

/**
 * `seckill projections rebuild`: replays MySQL's event store into fresh `orders` tables and compares them
 * with the live ones. The service's own container on the real profile, given MySQL's pool alone: only MySQL is
 * needed. `swap` puts the rebuilt table in place: stop the service first, or writes made meanwhile land in the
 * table being replaced.
 */
export const rebuildProjections = async (
  config: Config,
  logger: AppLogger,
  options: Readonly<{ resume?: boolean; swap?: boolean }>,
): Promise<RebuildReport> => {
  if (config.profile !== 'real')
    throw new ConfigError(
      'projections live in MySQL: set SECKILL_PROFILE=real (the memory profile keeps none)',
    );
  const resources = await openMySqlResources(config);
  try {
    const container = buildContainer(config, { logger, metrics: new PrometheusMetrics(), resources });
    return await container.get<RebuildProjections>(REBUILD).run(options);
  } finally {
    await resources.close();
  }
};
