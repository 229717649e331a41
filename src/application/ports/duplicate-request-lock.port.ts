export interface LockHandle {
  readonly key: string;
  /** Monotonic per key: a later holder always has a larger token. */
  readonly fencingToken: number;
  /** Releases the lock if this handle still owns it; false when it had already expired or moved on. */
  release(): Promise<boolean>;
}

export interface DuplicateRequestLock {
  /**
   * Tries to take `key`, waiting up to `waitMs` (0 = no wait). With `leaseMs` the lock expires on its own;
   * without it the lock is renewed until released. null when somebody else holds it.
   */
  tryLock(key: string, options: Readonly<{ waitMs: number; leaseMs?: number }>): Promise<LockHandle | null>;
}
export const DUPLICATE_REQUEST_LOCK = Symbol.for('seckill.DuplicateRequestLock');

export const orderLockKey = (userId: string, productId: number): string =>
  `lock:seckill:${userId}:${productId}`;
