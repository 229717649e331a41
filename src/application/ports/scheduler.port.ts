/** Every `everyMs` milliseconds, or on the ticks of a cron expression (UTC; a sixth field gives seconds). */
export type Schedule = Readonly<{ everyMs: number }> | Readonly<{ cron: string }>;

/**
 * Runs named jobs on a schedule; a backend shared by several workers runs each tick on one of them.
 * - Jobs are scheduled before `start`; a job scheduled after it is refused (it would never run on a
 *   shared backend).
 * - Runs of one job never overlap: a run that outlasts its interval delays the next.
 * - A job that throws is logged as an error naming the job, and runs again at its next tick.
 * - `stop` lets the runs under way finish; no run starts once it has resolved.
 */
export interface Scheduler {
  schedule(name: string, when: Schedule, job: () => Promise<unknown>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}
