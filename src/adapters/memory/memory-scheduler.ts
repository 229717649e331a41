import { CronExpressionParser } from 'cron-parser';
import type { Clock, Logger, Schedule, Scheduler } from '../../application/index.js';

type Job = {
  name: string;
  when: Schedule;
  run: () => Promise<unknown>;
  timer: NodeJS.Timeout | null;
  /** the run under way, if any */
  running: Promise<void> | null;
  /** the cron tick the timer waits for (epoch ms), or the last one run */
  tick: number | null;
};

/**
 * Timers in one process: enough for the memory profile, where there is only one worker. A cron tick is
 * found from the clock's time; the wait for it is a real timer.
 */
export class MemoryScheduler implements Scheduler {
  private readonly jobs: Job[] = [];
  private started = false;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  schedule(name: string, when: Schedule, run: () => Promise<unknown>): void {
    if (this.started) throw new Error(`job ${name} was scheduled after start: schedule jobs before start`);
    this.jobs.push({ name, when, run, timer: null, running: null, tick: null });
  }

  start(): Promise<void> {
    this.started = true;
    for (const job of this.jobs) this.arm(job);
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.started = false;
    for (const job of this.jobs) {
      if (job.timer) clearTimeout(job.timer);
      job.timer = null;
    }
    await Promise.all(this.jobs.flatMap((job) => (job.running ? [job.running] : [])));
  }

  private arm(job: Job): void {
    if (!this.started || job.running || job.timer) return;
    const delay = 'everyMs' in job.when ? job.when.everyMs : this.untilNextTick(job, job.when.cron);
    job.timer = setTimeout(() => void this.fire(job), Math.min(Math.max(delay, 0), 2 ** 31 - 1));
    job.timer.unref();
  }

  /**
   * Counted from the tick just run at the earliest, so that a timer that fires a little early, or a clock
   * that has not moved on (a test's), does not run one tick twice.
   */
  private untilNextTick(job: Job, cron: string): number {
    const now = Date.parse(this.clock.now());
    const from = Math.max(now, job.tick ?? now);
    job.tick = CronExpressionParser.parse(cron, { tz: 'UTC', currentDate: new Date(from) })
      .next()
      .getTime();
    return job.tick - now;
  }

  private async fire(job: Job): Promise<void> {
    job.timer = null;
    if (!this.started) return;
    job.running = this.runOnce(job);
    await job.running;
    job.running = null;
    this.arm(job);
  }

  private async runOnce(job: Job): Promise<void> {
    try {
      await job.run();
    } catch (error) {
      this.logger.error({ job: job.name, err: String(error) }, 'scheduled job failed');
    }
  }
}
