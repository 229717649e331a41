import { randomUUID } from 'node:crypto';
import type { DuplicateRequestLock, LockHandle } from '../../application/index.js';

type Holder = { owner: string; expiresAt: number };

/**
 * In-process lock with the same contract as the Redis one: owner tokens, leases, fencing tokens, waiters.
 * Leases and waits run on the machine's time, not the Clock port, as Redis times a PX lease: a test clock
 * that stands still must not make a lease last, or a wait go on, forever.
 */
export class MemoryLock implements DuplicateRequestLock {
  private readonly holders = new Map<string, Holder>();
  private readonly fencing = new Map<string, number>();
  private readonly waiters = new Map<string, Set<() => void>>();

  async tryLock(
    key: string,
    options: Readonly<{ waitMs: number; leaseMs?: number }>,
  ): Promise<LockHandle | null> {
    const deadline = Date.now() + options.waitMs;
    for (;;) {
      const handle = this.acquire(key, options.leaseMs);
      if (handle) return handle;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      await this.waitForRelease(key, Math.min(remaining, this.expiresIn(key)));
    }
  }

  private acquire(key: string, leaseMs: number | undefined): LockHandle | null {
    const now = Date.now();
    const current = this.holders.get(key);
    if (current && current.expiresAt > now) return null;
    const owner = randomUUID();
    this.holders.set(key, {
      owner,
      expiresAt: leaseMs === undefined ? Number.POSITIVE_INFINITY : now + leaseMs,
    });
    const fencingToken = (this.fencing.get(key) ?? 0) + 1;
    this.fencing.set(key, fencingToken);
    return { key, fencingToken, release: () => Promise.resolve(this.release(key, owner)) };
  }

  private release(key: string, owner: string): boolean {
    const current = this.holders.get(key);
    if (!current || current.owner !== owner || current.expiresAt <= Date.now()) return false;
    this.holders.delete(key);
    for (const wake of this.waiters.get(key) ?? []) wake();
    return true;
  }

  private expiresIn(key: string): number {
    const current = this.holders.get(key);
    return current ? Math.max(1, current.expiresAt - Date.now()) : 1;
  }

  private waitForRelease(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(key) ?? new Set();
      this.waiters.set(key, set);
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(wake, Math.min(ms, 2 ** 31 - 1));
      set.add(wake);
    });
  }
}
