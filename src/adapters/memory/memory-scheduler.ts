import { CronExpressionParser } from 'cron-parser';
import type { Logger, Schedule, Scheduler } from '../../application/index.js';

type Job = {
  name: string;
  when: Schedule;
  run: () => Promise<unknown>;
  timer: NodeJS.Timeout | null;
  running: boolean;
};

/** Timers in one process: enough for the memory profile, where there is only one worker. */
export class MemoryScheduler implements Scheduler {
  private readonly jobs: Job[] = [];
  private started = false;

  constructor(private readonly logger: Logger) {}

  schedule(name: string, when: Schedule, run: () => Promise<unknown>): void {
    const job: Job = { name, when, run, timer: null, running: false };
    this.jobs.push(job);
    if (this.started) this.arm(job);
  }

  start(): Promise<void> {
    this.started = true;
    for (const job of this.jobs) this.arm(job);
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.started = false;
    for (const job of this.jobs) {
      if (job.timer) clearTimeout(job.timer);
      job.timer = null;
    }
    return Promise.resolve();
  }

  private arm(job: Job): void {
    if (!this.started) return;
    const delay =
      'everyMs' in job.when
        ? job.when.everyMs
        : CronExpressionParser.parse(job.when.cron, { tz: 'UTC' }).next().getTime() - Date.now();
    job.timer = setTimeout(() => void this.fire(job), Math.min(Math.max(delay, 0), 2 ** 31 - 1));
    job.timer.unref();
  }

  private async fire(job: Job): Promise<void> {
    if (job.running) return this.arm(job);
    job.running = true;
    try {
      await job.run();
    } catch (error) {
      this.logger.error({ job: job.name, err: String(error) }, 'scheduled job failed');
    } finally {
      job.running = false;
      this.arm(job);
    }
  }
}
