import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { Logger, Scheduler } from '../../src/application/index.js';
import { SilentLogger } from '../support/app-doubles.js';
import type { Teardown } from '../support/contract-helpers.js';
import { held, type Held, JobRuns } from '../support/job-runs.js';

/** Short enough for a quick suite, long enough for a backend that polls (agenda polls this often too). */
export const INTERVAL_MS = 100;
const every = { everyMs: INTERVAL_MS } as const;

/**
 * A scheduler of its own that runs a job every interval: waiting for its runs shows that time has passed
 * (for a job that must NOT have run meanwhile) without sleeping for a guessed time.
 */
export type Witness = Readonly<{ intervalsPass: (count: number) => Promise<void> }>;

/** `make` gives a scheduler that the caller stops after the test. */
export const witnessOn = (make: () => Promise<Scheduler>): Witness => {
  let runs: JobRuns | null = null;
  return {
    intervalsPass: async (count) => {
      if (!runs) {
        const scheduler = await make();
        runs = new JobRuns();
        scheduler.schedule('witness', every, runs.job);
        await scheduler.start();
      }
      // count + 1 runs from now span at least `count` intervals
      await runs.startedAtLeast(runs.started + count + 1);
    },
  };
};

/**
 * The promises of the Scheduler port, for one process's scheduler. `make` gives a fresh scheduler that
 * logs to `logger`, sharing no jobs with any other it made; every scheduler made is stopped after its test.
 */
export const schedulerContract = (
  name: string,
  make: (logger: Logger) => Promise<Scheduler>,
  teardown?: Teardown<Scheduler>,
) =>
  describe(`Scheduler contract: ${name}`, () => {
    const made: Scheduler[] = [];
    const holds: Held[] = [];
    const logger = new SilentLogger();
    let witness: Witness;

    const scheduler = async (): Promise<Scheduler> => {
      const s = await make(logger);
      made.push(s);
      return s;
    };
    const hold = (): Held => {
      const h = held();
      holds.push(h);
      return h;
    };

    beforeEach(() => {
      witness = witnessOn(scheduler);
    });

    afterEach(async () => {
      for (const h of holds.splice(0)) h.release();
      const stopping = made.splice(0);
      await Promise.all(stopping.map((s) => s.stop()));
      if (teardown) for (const s of stopping) await teardown(s);
      logger.entries.length = 0;
    });

    it('runs nothing before start', async () => {
      const s = await scheduler();
      const runs = new JobRuns();
      s.schedule('idle', every, runs.job);
      await witness.intervalsPass(3);
      expect(runs.started).toBe(0);
    });

    it('runs a job every interval once started, again and again', async () => {
      const s = await scheduler();
      const runs = new JobRuns();
      s.schedule('ticking', every, runs.job);
      await s.start();
      await runs.finishedAtLeast(3);
      expect(runs.mostAtOnce).toBe(1);
    });

    it('runs a cron job on its ticks (UTC, seconds field)', async () => {
      const s = await scheduler();
      const runs = new JobRuns();
      s.schedule('each-second', { cron: '* * * * * *' }, runs.job);
      await s.start();
      await runs.finishedAtLeast(2);
    });

    it('refuses a job scheduled after start, rather than never running it', async () => {
      const s = await scheduler();
      s.schedule('early', every, new JobRuns().job);
      await s.start();
      expect(() => s.schedule('late', every, new JobRuns().job)).toThrow(/late/);
    });

    it('logs a job that throws as an error naming the job, and runs it again at its next tick', async () => {
      const s = await scheduler();
      const runs = new JobRuns((run) =>
        run === 1 ? Promise.reject(new Error('ledger unreachable')) : Promise.resolve(),
      );
      s.schedule('flaky', every, runs.job);
      await s.start();
      await runs.finishedAtLeast(2);
      expect(logger.entries).toContainEqual(
        expect.objectContaining({
          level: 'error',
          details: expect.objectContaining({
            job: 'flaky',
            err: expect.stringContaining('ledger unreachable'),
          }),
        }),
      );
    });

    it('never overlaps runs of one job: a run that outlasts its interval delays the next', async () => {
      const s = await scheduler();
      const first = hold();
      const runs = new JobRuns((run) => (run === 1 ? first.until : Promise.resolve()));
      s.schedule('slow', every, runs.job);
      await s.start();
      await runs.startedAtLeast(1);
      await witness.intervalsPass(3);
      expect(runs.started).toBe(1);
      first.release();
      await runs.finishedAtLeast(3);
      expect(runs.mostAtOnce).toBe(1);
    });

    it('stop lets a run under way finish, and nothing runs once it has resolved', async () => {
      const s = await scheduler();
      const first = hold();
      const seen: string[] = [];
      const runs = new JobRuns(async (run) => {
        if (run === 1) await first.until;
        seen.push(`run ${run} finished`);
      });
      s.schedule('stopping', every, runs.job);
      await s.start();
      await runs.startedAtLeast(1);
      const stopped = s.stop().then(() => seen.push('stopped'));
      await witness.intervalsPass(2);
      expect(seen).toEqual([]);
      first.release();
      await stopped;
      expect(seen).toEqual(['run 1 finished', 'stopped']);
      await witness.intervalsPass(3);
      expect(runs.started).toBe(1);
    });
  });
