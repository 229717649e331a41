import { randomUUID } from 'node:crypto';
import type { DuplicateRequestLock, LockHandle } from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';

/** KEYS: lock, fence. ARGV: owner, lease ms, fence ttl ms. Answers {fencing token, 0} or {0, ms left}. */
const ACQUIRE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local token = redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return {token, 0}
end
return {0, redis.call('PTTL', KEYS[1])}
`;

/** KEYS: lock. ARGV: owner, channel, message. Compare-and-delete: only the owner unlocks. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0
`;

/** KEYS: lock. ARGV: owner, lease ms. The watchdog's renewal: only while the owner still holds it. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

type LockCommands = {
  seckillLockAcquire(
    lock: string,
    fence: string,
    owner: string,
    leaseMs: number,
    fenceTtlMs: number,
  ): Promise<[number, number]>;
  seckillLockRelease(lock: string, owner: string, channel: string, message: string): Promise<number>;
  seckillLockRenew(lock: string, owner: string, leaseMs: number): Promise<number>;
};

export type RedisLockOptions = Readonly<{
  namespace?: string;
  /** lease used, and renewed every third of it, while a lock taken without a lease is held (Redisson's watchdog) */
  watchdogLeaseMs?: number;
  /** how long a fencing counter outlives its last use */
  fenceTtlMs?: number;
}>;

/**
 * A Redis lock with Redisson's semantics: an owner token, a lease or a watchdog that renews it, unlock only by
 * the owner, waiters woken by a pub/sub message, and a fencing token from INCR. The lock and its counter
 * sit in one hash tag, `{lock:seckill:<user>:<product>}`, so that one script updates both on Redis Cluster.
 */
export class RedisLock implements DuplicateRequestLock {
  private readonly redis: RedisClient & LockCommands;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly channel: string;
  private readonly namespace: string;
  private readonly watchdogLeaseMs: number;
  private readonly fenceTtlMs: number;
  private subscribed: Promise<unknown> | null = null;

  constructor(
    client: RedisClient,
    private readonly subscriber: RedisClient,
    options: RedisLockOptions = {},
  ) {
    this.namespace = options.namespace ?? '';
    this.watchdogLeaseMs = options.watchdogLeaseMs ?? 30_000;
    this.fenceTtlMs = options.fenceTtlMs ?? 24 * 3600_000;
    this.channel = `${this.namespace}seckill:lock-released`;
    const c = client as RedisClient & Partial<LockCommands>;
    if (typeof c.seckillLockAcquire !== 'function') {
      client.defineCommand('seckillLockAcquire', { numberOfKeys: 2, lua: ACQUIRE });
      client.defineCommand('seckillLockRelease', { numberOfKeys: 1, lua: RELEASE });
      client.defineCommand('seckillLockRenew', { numberOfKeys: 1, lua: RENEW });
    }
    this.redis = client as RedisClient & LockCommands;
    subscriber.on('message', (channel: string, key: string) => {
      if (channel === this.channel) for (const wake of this.waiters.get(key) ?? []) wake();
    });
  }

  async tryLock(
    key: string,
    options: Readonly<{ waitMs: number; leaseMs?: number }>,
  ): Promise<LockHandle | null> {
    const deadline = Date.now() + options.waitMs;
    const owner = randomUUID();
    const leaseMs = options.leaseMs ?? this.watchdogLeaseMs;
    if (options.waitMs > 0) await this.subscribe();
    for (;;) {
      const [token, msLeft] = await guarded('lock', () =>
        this.redis.seckillLockAcquire(this.lockKey(key), this.fenceKey(key), owner, leaseMs, this.fenceTtlMs),
      );
      if (token > 0) return this.handle(key, owner, token, options.leaseMs === undefined);
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      // woken by the holder's unlock message, or when its lease runs out
      await this.waitForRelease(key, Math.min(remaining, msLeft > 0 ? msLeft : 10));
    }
  }

  /** Resolves once the pub/sub connection listens, so that no unlock message is missed by a waiter. */
  private subscribe(): Promise<unknown> {
    this.subscribed ??= this.subscriber.subscribe(this.channel);
    return this.subscribed;
  }

  private handle(key: string, owner: string, fencingToken: number, watchdog: boolean): LockHandle {
    const lockKey = this.lockKey(key);
    let timer: NodeJS.Timeout | null = null;
    if (watchdog) {
      timer = setInterval(
        () => {
          this.redis.seckillLockRenew(lockKey, owner, this.watchdogLeaseMs).then(
            (renewed) => {
              if (renewed === 0 && timer) clearInterval(timer);
            },
            // a missed renewal is retried at the next tick; the lease covers two more of them
            () => undefined,
          );
        },
        Math.max(1, Math.floor(this.watchdogLeaseMs / 3)),
      );
      timer.unref();
    }
    return {
      key,
      fencingToken,
      release: async () => {
        if (timer) clearInterval(timer);
        const released = await guarded('unlock', () =>
          this.redis.seckillLockRelease(lockKey, owner, this.channel, key),
        );
        return released === 1;
      },
    };
  }

  private lockKey(key: string): string {
    return `${this.namespace}{${key}}`;
  }

  private fenceKey(key: string): string {
    return `${this.namespace}{${key}}:fence`;
  }

  private waitForRelease(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(key) ?? new Set<() => void>();
      this.waiters.set(key, set);
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
    });
  }
}
