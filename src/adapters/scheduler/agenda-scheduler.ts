import { RedisBackend } from '@agendajs/redis-backend';
import { Agenda } from 'agenda';
import type { Logger, Schedule, Scheduler } from '../../application/index.js';
import { connectRedis, type RedisClient } from '../redis/redis-connection.js';

export type AgendaSchedulerOptions = Readonly<{
  /** a single Redis node: the backend's WATCH/MULTI locking needs all of its keys on one server */
  redisUrl: string;
  /** prefix of agenda's keys and channel, so deployments (and test runs) sharing a Redis stay apart */
  namespace: string;
  /** how long a job run may hold its lock before another worker may take it over */
  lockLifetimeMs?: number;
}>;

type Planned = { name: string; when: Schedule };

/**
 * Scheduled jobs on agenda with its Redis backend. Every worker defines the same jobs; each job is stored
 * once (by name) and locked atomically per run, so across several worker processes each tick runs on one
 * of them only.
 */
export class AgendaScheduler implements Scheduler {
  private readonly agenda: Agenda;
  private readonly planned: Planned[] = [];
  private readonly redis: RedisClient;
  private readonly namespace: string;

  constructor(
    options: AgendaSchedulerOptions,
    private readonly logger: Logger,
  ) {
    this.redis = connectRedis({ url: options.redisUrl, commandTimeoutMs: 2_000 });
    this.namespace = options.namespace;
    this.agenda = new Agenda({
      backend: new RedisBackend({
        connectionString: options.redisUrl,
        keyPrefix: `${options.namespace}seckill-agenda:`,
        channelName: `${options.namespace}seckill-agenda:notifications`,
      }),
      name: `seckill-${process.pid}`,
      processEvery: 1_000,
      defaultLockLifetime: options.lockLifetimeMs ?? 5 * 60_000,
      defaultConcurrency: 1,
    });
    this.agenda.on('error', (error: Error) => this.logger.error({ err: String(error) }, 'scheduler error'));
  }

  schedule(name: string, when: Schedule, job: () => Promise<unknown>): void {
    this.planned.push({ name, when });
    this.agenda.define(
      name,
      async (run) => {
        const tick = run.attrs.lastRunAt?.toISOString() ?? null;
        if (!(await this.claimTick(name, when))) return;
        const result = await job();
        this.logger.info({ job: name, tick, pid: process.pid, result }, 'scheduled job ran');
      },
      { concurrency: 1, lockLimit: 1 },
    );
  }

  async start(): Promise<void> {
    // poll at least as often as the shortest interval asks (Redis pub/sub wakes the workers in between)
    const shortest = Math.min(
      1_000,
      ...this.planned.map(({ when }) => ('everyMs' in when ? when.everyMs : 1_000)),
    );
    this.agenda.processEvery(shortest);
    await this.agenda.start();
    for (const { name, when } of this.planned) {
      const interval = 'everyMs' in when ? when.everyMs : when.cron;
      // Re-saving a job another worker is running would clear its lock and let it run twice: a worker
      // (re)schedules a job only when it is missing or its schedule changed.
      const { jobs } = await this.agenda.queryJobs({ name });
      if (jobs.some((job) => String(job.repeatInterval) === String(interval))) continue;
      await this.agenda.every(interval, name, undefined, { timezone: 'UTC', skipImmediate: true });
    }
  }

  async stop(): Promise<void> {
    await this.agenda.stop();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /**
   * Belt and braces over agenda's lock: a run claims its job for most of an interval with SET NX, so that a
   * second worker picking up the same tick (say, while a job record is being re-saved) stands down.
   */
  private async claimTick(name: string, when: Schedule): Promise<boolean> {
    const holdMs = 'everyMs' in when ? Math.max(1, Math.floor(when.everyMs * 0.8)) : 30_000;
    const key = `${this.namespace}seckill-agenda:tick:${name}`;
    const claimed = await this.redis.set(key, String(process.pid), 'PX', holdMs, 'NX');
    return claimed === 'OK';
  }
}
