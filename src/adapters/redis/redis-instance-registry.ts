import {
  INSTANCE_RETENTION_MS,
  type InstanceBeat,
  type InstanceRegistry,
  type InstanceSighting,
} from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';

/** Redis's own clock, in milliseconds: every beat and every reading is timed by the one server that holds them. */
const NOW_MS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`;

/**
 * KEYS: beats (hash), seen (sorted set). ARGV: instanceId, beat (JSON), retention (ms). Records the beat and
 * when Redis took it, forgets the instances silent for longer than the retention, and lets both keys expire
 * with the last beat of the deployment.
 */
const BEAT = `${NOW_MS}
local retention = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now, ARGV[1])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - retention))) do
  redis.call('HDEL', KEYS[1], gone)
  redis.call('ZREM', KEYS[2], gone)
end
redis.call('PEXPIRE', KEYS[1], retention)
redis.call('PEXPIRE', KEYS[2], retention)
return 1
`;

/**
 * KEYS: beats, seen. ARGV: retention (ms). Answers Redis's time, then for each instance seen within the
 * retention when it was seen and its beat ('' if it was removed meanwhile).
 */
const LIST = `${NOW_MS}
local seen = redis.call('ZRANGEBYSCORE', KEYS[2], now - tonumber(ARGV[1]), '+inf', 'WITHSCORES')
local answer = { tostring(now) }
for i = 1, #seen, 2 do
  answer[#answer + 1] = seen[i + 1]
  answer[#answer + 1] = redis.call('HGET', KEYS[1], seen[i]) or ''
end
return answer
`;

type RegistryCommands = {
  seckillInstanceBeat(
    beats: string,
    seen: string,
    id: string,
    beat: string,
    retention: number,
  ): Promise<number>;
  seckillInstanceList(beats: string, seen: string, retention: number): Promise<string[]>;
};

/**
 * The instances of a deployment in two keys: a hash of each instance's last beat (JSON) and a sorted set of
 * when Redis took it. Both carry the hash tag `{instances}`, so the scripts that touch both run on Redis Cluster
 * (one slot). Every time is Redis's own (`TIME` inside the scripts): an instance's age is the same whichever
 * host reads it, and hosts whose clocks drift apart cannot make a live instance look dead. The beat script
 * prunes what is past the retention window, so the keys hold the deployment's instances of the last minutes
 * only, and listing them is one script call. One write per beat per process.
 */
export class RedisInstanceRegistry implements InstanceRegistry {
  private readonly redis: RedisClient & RegistryCommands;
  private readonly keys: Readonly<{ beats: string; seen: string }>;

  constructor(
    client: RedisClient,
    namespace = '',
    private readonly retentionMs = INSTANCE_RETENTION_MS,
  ) {
    const c = client as RedisClient & Partial<RegistryCommands>;
    if (typeof c.seckillInstanceBeat !== 'function')
      client.defineCommand('seckillInstanceBeat', { numberOfKeys: 2, lua: BEAT });
    if (typeof c.seckillInstanceList !== 'function')
      client.defineCommand('seckillInstanceList', { numberOfKeys: 2, lua: LIST });
    this.redis = client as RedisClient & RegistryCommands;
    this.keys = {
      beats: `${namespace}seckill:{instances}:beats`,
      seen: `${namespace}seckill:{instances}:seen`,
    };
  }

  async beat(beat: InstanceBeat): Promise<void> {
    const { beats, seen } = this.keys;
    await guarded('instance beat', () =>
      this.redis.seckillInstanceBeat(beats, seen, beat.instanceId, JSON.stringify(beat), this.retentionMs),
    );
  }

  async remove(instanceId: string): Promise<void> {
    const { beats, seen } = this.keys;
    await guarded('instance removal', () =>
      this.redis.multi().hdel(beats, instanceId).zrem(seen, instanceId).exec(),
    );
  }

  async list(): Promise<InstanceSighting[]> {
    const { beats, seen } = this.keys;
    const [now, ...pairs] = await guarded('instance list', () =>
      this.redis.seckillInstanceList(beats, seen, this.retentionMs),
    );
    const nowMs = Number(now);
    const sightings: InstanceSighting[] = [];
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const seenAtMs = Number(pairs[i]);
      const beat = pairs[i + 1];
      if (!beat) continue;
      sightings.push({
        ...(JSON.parse(beat) as InstanceBeat),
        lastSeenAt: new Date(seenAtMs).toISOString(),
        lastSeenAgoMs: Math.max(0, nowMs - seenAtMs),
      });
    }
    return sightings;
  }
}
