import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { InfrastructureUnavailable } from '../../application/index.js';

export type RedisClient = Redis | Cluster;

export type RedisConnectionOptions = Readonly<{
  /** a single `redis://host:port`, or a comma list of them for Redis Cluster */
  url: string;
  /** a command that gets no answer within this fails (Redis down or frozen ⇒ 503, never a hang) */
  commandTimeoutMs?: number;
  /**
   * A connection for SUBSCRIBE only: it skips the ready check, whose INFO a subscribed connection may not
   * send, and has no command timeout (a subscription waits for messages as long as it lives).
   */
  subscriber?: boolean;
  /**
   * ioredis auto-pipelining: the commands issued in one turn of the event loop (by concurrent requests)
   * leave in one write, and their answers come back in one read.
   */
  autoPipelining?: boolean;
}>;

/**
 * Commands that leave alone, never auto-pipelined. Auto-pipelining on a cluster groups a command with others by
 * its first argument, taken for its key; a script whose number of keys comes first in each call would be grouped
 * by that number, in with commands of other masters, and the whole pipeline refused.
 */
export const NOT_AUTO_PIPELINED = ['seckillUnlock'];

const clientOptions = (
  commandTimeoutMs: number,
  subscriber: boolean,
  autoPipelining: boolean,
): RedisOptions => ({
  ...(subscriber ? { enableReadyCheck: false } : { commandTimeout: commandTimeoutMs }),
  enableAutoPipelining: autoPipelining && !subscriber,
  autoPipeliningIgnoredCommands: NOT_AUTO_PIPELINED,
  maxRetriesPerRequest: 1,
  connectTimeout: 2_000,
  // keep reconnecting in the background; requests meanwhile fail fast through the command timeout
  retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2_000),
});

/** A single node for one URL, a Cluster client for a comma list. */
export const connectRedis = (options: RedisConnectionOptions): RedisClient => {
  const urls = options.url
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  const redisOptions = clientOptions(
    options.commandTimeoutMs ?? 1_000,
    options.subscriber ?? false,
    options.autoPipelining ?? false,
  );
  if (urls.length <= 1) return new Redis(urls[0] ?? 'redis://127.0.0.1:6379', redisOptions);
  const nodes = urls.map((u) => {
    const parsed = new URL(u);
    return { host: parsed.hostname, port: Number(parsed.port || 6379) };
  });
  return new Cluster(nodes, {
    redisOptions,
    scaleReads: 'master',
    enableReadyCheck: true,
    enableAutoPipelining: redisOptions.enableAutoPipelining ?? false,
    autoPipeliningIgnoredCommands: NOT_AUTO_PIPELINED,
  });
};

/** Turns any Redis failure into the port's unavailable error. */
export const guarded = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    throw new InfrastructureUnavailable(
      'redis',
      `${what}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
};
