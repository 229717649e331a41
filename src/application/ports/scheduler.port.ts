export type Schedule = Readonly<{ everyMs: number }> | Readonly<{ cron: string }>;

/** Runs named jobs on a schedule; a backend shared by several workers runs each tick on one of them. */
export interface Scheduler {
  schedule(name: string, when: Schedule, job: () => Promise<unknown>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}
export const SCHEDULER = Symbol.for('seckill.Scheduler');
