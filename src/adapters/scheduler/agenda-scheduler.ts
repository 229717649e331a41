import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { RedisBackend } from '@agendajs/redis-backend';
import { Agenda } from 'agenda';
import { CronExpressionParser } from 'cron-parser';
import type { Redis } from 'ioredis';
import type { Logger, Schedule, Scheduler } from '../../application/index.js';
import { connectRedis, type RedisClient } from '../redis/redis-connection.js';

export type AgendaSchedulerOptions = Readonly<{
  /**
   * One Redis node, or a comma list of Redis Cluster nodes. The backend locks a job with WATCH/MULTI and
   * reads its indexes in Lua scripts that name job keys they were not given, so all of its keys share one
   * hash tag (`{seckill-agenda}`): on a cluster they live in one slot, on one master (and its replica).
   */
  redisUrl: string;
  /** prefix of agenda's keys and channel, so deployments (and test runs) sharing a Redis stay apart */
  namespace: string;
  /** how long a job run may hold its lock before another worker may take it over */
  lockLifetimeMs?: number;
}>;

type Planned = { name: string; when: Schedule };

const STORING_LEASE_MS = 10_000;
const RELEASE_IF_OWNER = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** From now to a cron expression's next tick (UTC), in ms: about one interval, read just after a tick. */
const untilNextTick = (cron: string): number =>
  CronExpressionParser.parse(cron, { tz: 'UTC' }).next().getTime() - Date.now();

/**
 * Scheduled jobs on agenda with its Redis backend. Every worker defines the same jobs; each job is stored
 * once (by name) and locked atomically per run, so across several worker processes each tick runs on one
 * of them only.
 */
export class AgendaScheduler implements Scheduler {
  private readonly agenda: Agenda;
  private readonly backend: RedisBackend;
  private readonly planned: Planned[] = [];
  private readonly redis: RedisClient;
  private readonly backendRedis: RedisClient;
  private readonly keyPrefix: string;
  private readonly lockLifetimeMs: number;
  private started = false;

  constructor(
    options: AgendaSchedulerOptions,
    private readonly logger: Logger,
  ) {
    this.redis = connectRedis({ url: options.redisUrl, commandTimeoutMs: 2_000 });
    this.backendRedis = connectRedis({ url: options.redisUrl, commandTimeoutMs: 2_000 });
    this.keyPrefix = `${options.namespace}{seckill-agenda}:`;
    this.lockLifetimeMs = options.lockLifetimeMs ?? 5 * 60_000;
    this.backend = new RedisBackend({
      // a client of the backend's own, of the same kind as ours (a node or a cluster); the backend does not
      // close a client it was given: stop() does
      redis: this.backendRedis as Redis,
      keyPrefix: this.keyPrefix,
      channelName: `${options.namespace}seckill-agenda:notifications`,
    });
    this.agenda = new Agenda({
      backend: this.backend,
      name: `seckill-${process.pid}`,
      processEvery: 1_000,
      defaultLockLifetime: this.lockLifetimeMs,
      defaultConcurrency: 1,
    });
    this.agenda.on('error', (error: Error) => this.logger.error({ err: String(error) }, 'scheduler error'));
  }

  schedule(name: string, when: Schedule, job: () => Promise<unknown>): void {
    // start() stores the planned jobs in the backend: a job defined later would never be stored, so never run
    if (this.started) throw new Error(`job ${name} was scheduled after start: schedule jobs before start`);
    this.planned.push({ name, when });
    this.agenda.define(
      name,
      async (run) => {
        const tick = run.attrs.lastRunAt?.toISOString() ?? null;
        if (!(await this.claimTick(name, when))) return;
        let result: unknown;
        try {
          result = await job();
        } catch (error) {
          // agenda records the failure on the job and runs it again at its next tick; operators learn of it here
          this.logger.error(
            { job: name, tick, pid: process.pid, err: String(error) },
            'scheduled job failed',
          );
          throw error;
        }
        this.logger.info({ job: name, tick, pid: process.pid, result }, 'scheduled job ran');
      },
      { concurrency: 1, lockLimit: 1 },
    );
  }

  async start(): Promise<void> {
    this.started = true;
    // poll at least as often as the shortest interval asks (Redis pub/sub wakes the workers in between)
    const shortest = Math.min(
      1_000,
      ...this.planned.map(({ when }) => ('everyMs' in when ? when.everyMs : 1_000)),
    );
    this.agenda.processEvery(shortest);
    await this.agenda.start();
    await this.oneWorkerAtATime('storing', () => this.storeJobs());
  }

  /**
   * Re-saving a job another worker is running would clear its lock and let it run twice: a worker
   * (re)schedules a job only when it is missing or its schedule changed. Called one worker at a time: the
   * backend's upsert by name reads, then writes, so workers starting together would each store the job,
   * and two records of one job run on two workers at once.
   */
  private async storeJobs(): Promise<void> {
    for (const { name, when } of this.planned) {
      const interval = 'everyMs' in when ? when.everyMs : when.cron;
      const { jobs } = await this.agenda.queryJobs({ name });
      if (jobs.some((job) => String(job.repeatInterval) === String(interval))) continue;
      await this.agenda.every(interval, name, undefined, { timezone: 'UTC', skipImmediate: true });
    }
  }

  /** A Redis lease (SET NX PX) around `work`; a worker that dies holding it frees it when the lease ends. */
  private async oneWorkerAtATime(what: string, work: () => Promise<void>): Promise<void> {
    const key = `${this.keyPrefix}${what}`;
    const owner = `${process.pid}:${randomUUID()}`;
    while ((await this.redis.set(key, owner, 'PX', STORING_LEASE_MS, 'NX')) !== 'OK') await delay(20);
    try {
      await work();
    } finally {
      await this.redis.eval(RELEASE_IF_OWNER, 1, key, owner);
    }
  }

  /**
   * Lets the runs under way finish before the backend is closed, so that their end is recorded and their
   * lock released: agenda's stop() closes it at once, and a run that ends afterwards leaves its job locked
   * for the other workers until the lock lifetime runs out. A run that outlasts the lock lifetime is not
   * waited for: another worker may take the job over by then anyway.
   */
  async stop(): Promise<void> {
    // agenda closes the backend (its subscription) only if it was started
    if (this.started) await this.agenda.drain({ timeout: this.lockLifetimeMs });
    else await this.backend.disconnect();
    for (const client of [this.backendRedis, this.redis])
      await client.quit().catch(() => client.disconnect());
  }

  /**
   * Belt and braces over agenda's lock: a run claims its job for most of an interval with SET NX, so that a
   * second worker picking up the same tick (say, while a job record is being re-saved) stands down.
   */
  private async claimTick(name: string, when: Schedule): Promise<boolean> {
    const holdMs = Math.max(
      1,
      Math.floor(0.8 * ('everyMs' in when ? when.everyMs : untilNextTick(when.cron))),
    );
    const key = `${this.keyPrefix}tick:${name}`;
    const claimed = await this.redis.set(key, String(process.pid), 'PX', holdMs, 'NX');
    return claimed === 'OK';
  }
}
