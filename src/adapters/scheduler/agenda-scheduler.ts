import { RedisBackend } from '@agendajs/redis-backend';
import { Agenda } from 'agenda';
import type { Logger, Schedule, Scheduler } from '../../application/index.js';

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

  constructor(
    options: AgendaSchedulerOptions,
    private readonly logger: Logger,
  ) {
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
      await this.agenda.every(interval, name, undefined, { timezone: 'UTC', skipImmediate: true });
    }
  }

  async stop(): Promise<void> {
    await this.agenda.stop();
  }
}
