import { describe, expect, it } from '@jest/globals';
import type { DuplicateRequestLock, LockHandle } from '../../src/application/index.js';
import { countWhere, freshPerTest, timed, type Teardown } from '../support/contract-helpers.js';

const KEY = 'lock:seckill:user-1:7';
/** Timers and server clocks may round a little; waits are checked against the asked time minus this. */
const TIMER_SLACK_MS = 15;

const held = (handle: LockHandle | null): LockHandle => {
  expect(handle).not.toBeNull();
  return handle as LockHandle;
};

export const duplicateRequestLockContract = (
  name: string,
  make: () => Promise<DuplicateRequestLock>,
  teardown?: Teardown<DuplicateRequestLock>,
) =>
  describe(`DuplicateRequestLock contract: ${name}`, () => {
    const lock = freshPerTest(make, teardown);

    it('lets exactly one of 200 concurrent contenders in when nobody waits', async () => {
      const handles = await Promise.all(
        Array.from({ length: 200 }, () => lock().tryLock(KEY, { waitMs: 0, leaseMs: 10_000 })),
      );
      expect(countWhere(handles, (h) => h !== null)).toBe(1);
    });

    it('keeps keys independent', async () => {
      held(await lock().tryLock(KEY, { waitMs: 0 }));
      const other = await lock().tryLock('lock:seckill:user-2:7', { waitMs: 0 });
      expect(other?.key).toBe('lock:seckill:user-2:7');
    });

    it('lets the key be taken again after release, and a second release answers false', async () => {
      const first = held(await lock().tryLock(KEY, { waitMs: 0 }));
      expect(first.key).toBe(KEY);
      expect(await lock().tryLock(KEY, { waitMs: 0 })).toBeNull();
      expect(await first.release()).toBe(true);
      expect(await first.release()).toBe(false);
      held(await lock().tryLock(KEY, { waitMs: 0 }));
    });

    it('makes a waiting contender get the lock once the holder releases it', async () => {
      const holder = held(await lock().tryLock(KEY, { waitMs: 0 }));
      let settled = false;
      const waiting = lock()
        .tryLock(KEY, { waitMs: 5_000 })
        .finally(() => (settled = true));
      // the holder is still in; give the contender a chance to (wrongly) settle
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settled).toBe(false);
      expect(await holder.release()).toBe(true);
      const contender = held(await waiting);
      expect(contender.fencingToken).toBeGreaterThan(holder.fencingToken);
    });

    it('gives a released lock to exactly one of several waiters', async () => {
      const holder = held(await lock().tryLock(KEY, { waitMs: 0 }));
      const waiters = Array.from({ length: 10 }, () => lock().tryLock(KEY, { waitMs: 400 }));
      await holder.release();
      const handles = await Promise.all(waiters);
      expect(countWhere(handles, (h) => h !== null)).toBe(1);
    });

    it('gives up after waitMs while the lock stays held', async () => {
      held(await lock().tryLock(KEY, { waitMs: 0, leaseMs: 10_000 }));
      const { value, ms } = await timed(lock().tryLock(KEY, { waitMs: 200 }));
      expect(value).toBeNull();
      expect(ms).toBeGreaterThanOrEqual(200 - TIMER_SLACK_MS);
    });

    it('lets another contender in once a lease expires', async () => {
      const expiring = held(await lock().tryLock(KEY, { waitMs: 0, leaseMs: 100 }));
      const { value, ms } = await timed(lock().tryLock(KEY, { waitMs: 3_000, leaseMs: 10_000 }));
      const next = held(value);
      expect(ms).toBeGreaterThanOrEqual(100 - TIMER_SLACK_MS - 10);
      expect(next.fencingToken).toBeGreaterThan(expiring.fencingToken);
    });

    it('hands out strictly increasing fencing tokens across holders', async () => {
      const tokens: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        const handle = held(await lock().tryLock(KEY, { waitMs: 0 }));
        tokens.push(handle.fencingToken);
        await handle.release();
      }
      const expired = held(await lock().tryLock(KEY, { waitMs: 0, leaseMs: 50 }));
      tokens.push(expired.fencingToken);
      tokens.push(held(await lock().tryLock(KEY, { waitMs: 3_000 })).fencingToken);
      for (let i = 1; i < tokens.length; i += 1) expect(tokens[i]).toBeGreaterThan(tokens[i - 1] ?? Infinity);
    });

    it("does not let a stale handle release the new holder's lock", async () => {
      const stale = held(await lock().tryLock(KEY, { waitMs: 0, leaseMs: 100 }));
      const current = held(await lock().tryLock(KEY, { waitMs: 3_000, leaseMs: 10_000 }));
      expect(await stale.release()).toBe(false);
      expect(await lock().tryLock(KEY, { waitMs: 0 })).toBeNull();
      expect(await current.release()).toBe(true);
      held(await lock().tryLock(KEY, { waitMs: 0 }));
    });

    it('keeps a lock taken without a lease until it is released', async () => {
      const holder = held(await lock().tryLock(KEY, { waitMs: 0 }));
      // longer than any short lease would last: the lock must still be held throughout
      const { value, ms } = await timed(lock().tryLock(KEY, { waitMs: 300 }));
      expect(value).toBeNull();
      expect(ms).toBeGreaterThanOrEqual(300 - TIMER_SLACK_MS);
      expect(await holder.release()).toBe(true);
      held(await lock().tryLock(KEY, { waitMs: 0 }));
    });
  });
