import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryScheduler } from '../../src/adapters/memory/memory-scheduler.js';
import { SystemClock } from '../../src/adapters/system/system-clock.js';
import { TestClock } from '../support/app-doubles.js';
import { silentLogger } from '../support/contract-helpers.js';
import { JobRuns } from '../support/job-runs.js';
import { INTERVAL_MS, schedulerContract } from './scheduler.contract.js';

schedulerContract('MemoryScheduler', (logger) =>
  Promise.resolve(new MemoryScheduler(new SystemClock(), logger)),
);

describe('MemoryScheduler and the clock', () => {
  const clock = new TestClock('2030-01-01T02:59:59.950Z');
  const scheduler = new MemoryScheduler(clock, silentLogger);
  afterEach(() => scheduler.stop());

  it("finds a cron job's next tick from the clock, not the machine's time, and runs that tick once", async () => {
    const nightly = new JobRuns();
    const ticking = new JobRuns();
    scheduler.schedule('nightly', { cron: '0 3 * * *' }, nightly.job);
    scheduler.schedule('ticking', { everyMs: INTERVAL_MS / 10 }, ticking.job);
    await scheduler.start();
    // 50 ms before 03:00 by the clock: the machine's time would put the tick hours away
    await nightly.finishedAtLeast(1);
    // the clock has not moved on: still before 03:00, but that tick has been run
    await ticking.startedAtLeast(ticking.started + 20);
    expect(nightly.started).toBe(1);
  }, 10_000);
});
