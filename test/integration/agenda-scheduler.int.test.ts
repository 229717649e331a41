import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Logger, Scheduler } from '../../src/application/index.js';
import { connectRedis, type RedisClient } from '../../src/adapters/redis/redis-connection.js';
import { AgendaScheduler } from '../../src/adapters/scheduler/agenda-scheduler.js';
import { INTERVAL_MS, schedulerContract, witnessOn } from '../contract/scheduler.contract.js';
import { silentLogger } from '../support/contract-helpers.js';
import { held, JobRuns } from '../support/job-runs.js';
import { redisClusterForSuites } from '../support/redis-cluster.js';
import { dropNamespace, freshNamespace } from '../support/redis-contracts.js';

/** The scheduler's suites against the Redis at `url()`: one node, or a comma list of cluster nodes. */
const agendaSuites = (label: string, url: () => string): void => {
  let client: RedisClient;
  beforeAll(() => {
    client = connectRedis({ url: url(), commandTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await client.quit();
  });

  const namespaces = new Map<Scheduler, string>();
  /** A worker's scheduler; workers given one namespace share a backend, as a deployment's workers do. */
  const agenda = (logger: Logger, namespace = freshNamespace()): AgendaScheduler => {
    // Short, yet well over the longest run a test holds (a few intervals): a test that fails while holding a
    // run does not hold up its teardown for long. agenda checks a running job every half lifetime on a timer
    // it does not clear when the run ends, so jest may wait that long (and say so) after the last test.
    const scheduler = new AgendaScheduler({ redisUrl: url(), namespace, lockLifetimeMs: 3_000 }, logger);
    namespaces.set(scheduler, namespace);
    return scheduler;
  };
  const dropKeys = async (scheduler: Scheduler): Promise<void> => {
    const namespace = namespaces.get(scheduler);
    namespaces.delete(scheduler);
    if (namespace) await dropNamespace(client, namespace);
  };

  schedulerContract(
    `AgendaScheduler (agenda 6, Redis backend, ${label})`,
    (logger) => Promise.resolve(agenda(logger)),
    dropKeys,
  );

  describe(`AgendaScheduler: workers sharing a backend (${label})`, () => {
    const made: Scheduler[] = [];
    const release: Array<() => void> = [];
    const worker = (namespace?: string): AgendaScheduler => {
      const scheduler = agenda(silentLogger, namespace);
      made.push(scheduler);
      return scheduler;
    };
    afterEach(async () => {
      for (const r of release.splice(0)) r();
      const stopping = made.splice(0);
      await Promise.all(stopping.map((s) => s.stop()));
      for (const s of stopping) await dropKeys(s);
    });

    it('never run one job on two workers at once', async () => {
      const witness = witnessOn(() => Promise.resolve(worker()));
      const first = held();
      release.push(first.release);
      // one job, defined by both workers, as every worker process of a deployment defines it
      const runs = new JobRuns((run) => (run === 1 ? first.until : Promise.resolve()));
      const namespace = freshNamespace();
      const workers = [worker(namespace), worker(namespace)];
      for (const w of workers) w.schedule('shared', { everyMs: INTERVAL_MS }, runs.job);
      await Promise.all(workers.map((w) => w.start()));
      await runs.startedAtLeast(1);
      // the run holds the job's lock: the other worker must not start the job meanwhile
      await witness.intervalsPass(3);
      expect(runs.started).toBe(1);
      first.release();
      await runs.finishedAtLeast(4);
      expect(runs.mostAtOnce).toBe(1);
    });

    it('a worker stopped during a run keeps the job from the others until the run ends, then hands it on', async () => {
      const witness = witnessOn(() => Promise.resolve(worker()));
      const first = held();
      release.push(first.release);
      const runs = new JobRuns((run) => (run === 1 ? first.until : Promise.resolve()));
      const namespace = freshNamespace();
      const [one, other] = [worker(namespace), worker(namespace)];
      one.schedule('shared', { everyMs: INTERVAL_MS }, runs.job);
      await one.start();
      await runs.startedAtLeast(1);
      other.schedule('shared', { everyMs: INTERVAL_MS }, runs.job);
      await other.start();
      const stopped = one.stop();
      await witness.intervalsPass(3);
      expect(runs.started).toBe(1);
      first.release();
      await stopped;
      // the run's end was recorded before the worker let go: the worker left takes the job up at its next
      // ticks, not once the lock's lifetime has run out (30 intervals here, 5 minutes by default)
      const next = await Promise.race([
        runs.finishedAtLeast(3).then(() => 'the job ran again'),
        witness.intervalsPass(10).then(() => 'ten intervals passed'),
      ]);
      expect(next).toBe('the job ran again');
      expect(runs.mostAtOnce).toBe(1);
    });
  });
};

agendaSuites('one node', () => process.env['SECKILL_REDIS_URL']?.split(',')[0] ?? 'redis://127.0.0.1:6379');

describe('on Redis Cluster', () => {
  const cluster = redisClusterForSuites();
  agendaSuites('3-master Redis Cluster', () => cluster().url);
});
