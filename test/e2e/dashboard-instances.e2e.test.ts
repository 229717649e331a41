import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SaleFigures } from '../../src/application/index.js';
import { connectRedis, type RedisClient } from '../../src/adapters/redis/redis-connection.js';
import { RedisInstanceRegistry } from '../../src/adapters/redis/redis-instance-registry.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { KillableRegistry } from '../support/app-doubles.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { dropNamespace, freshNamespace } from '../support/redis-contracts.js';

const BEAT_MS = 200;
const ENV = { SECKILL_INSTANCE_BEAT_MS: String(BEAT_MS), SECKILL_RATE_LIMIT_POINTS: '100000' };

/**
 * Two processes of one deployment, an API and a worker, beating into the Redis registry they share, as
 * `seckill serve` and `seckill worker` on two machines would (each here runs the memory profile for the rest:
 * what is under test is the registry, the beats and the dashboard's answer).
 */
describe('the dashboard of a scaled-out deployment', () => {
  let redis: RedisClient;
  const namespace = freshNamespace();
  let registry: RedisInstanceRegistry;
  let apiBeats: KillableRegistry;
  let workerBeats: KillableRegistry;
  let apiProcess: SeckillService | null = null;
  let workerProcess: SeckillService | null = null;
  let api: ApiClient;
  let admin: string;

  const figures = async (): Promise<SaleFigures> => {
    const answer = await api.request('GET', '/api/v1/admin/dashboard', { token: admin });
    expect(answer.status).toBe(200);
    return answer.body as unknown as SaleFigures;
  };

  beforeAll(async () => {
    redis = connectRedis({ url: process.env['SECKILL_REDIS_URL'] ?? 'redis://127.0.0.1:6379' });
    registry = new RedisInstanceRegistry(redis, namespace);
    apiBeats = new KillableRegistry(registry);
    workerBeats = new KillableRegistry(registry);
    apiProcess = await startMemoryService(ENV, { instances: () => apiBeats }, { http: true, worker: false });
    workerProcess = await startMemoryService(
      ENV,
      { instances: () => workerBeats },
      { http: false, worker: true },
    );
    api = new ApiClient(apiProcess.url, apiProcess.config.jwtSecret);
    admin = await api.token('ops', 'admin');
  });

  afterAll(async () => {
    await apiProcess?.close();
    await workerProcess?.close();
    await dropNamespace(redis, namespace);
    await redis.quit();
  });

  it('lists every process from the API that answers, with its role, its readiness and what it answered', async () => {
    const productId = await api.listProduct({ name: 'Kettle', stock: 10, perUserLimit: 1, maxPerOrder: 1 });
    const order = async (buyer: string) =>
      (
        await api.request('POST', '/api/v1/seckill/orders', {
          token: await api.token(buyer),
          json: { productId, quantity: 1 },
        })
      ).status;
    expect(await Promise.all(['b1', 'b2', 'b3'].map(order))).toEqual([202, 202, 202]);
    expect(await Promise.all(['b1', 'b2'].map(order))).toEqual([409, 409]);

    await eventually(
      async () => {
        const { instances, totals } = await figures();
        expect(instances).toMatchObject([
          {
            instanceId: apiProcess!.instanceId,
            role: 'api',
            pid: process.pid,
            status: 'up',
            ready: {},
            beatEveryMs: BEAT_MS,
            counts: { accepted: 3, rejected: 2, failed: 0 },
          },
          { instanceId: workerProcess!.instanceId, role: 'worker', status: 'up' },
        ]);
        expect(totals).toEqual({ accepted: 3, rejected: 2, failed: 0, committed: 0, released: 0 });
      },
      5_000,
      50,
    );
    // the id names the host and the process, and is this process's for its whole life
    expect(apiProcess!.instanceId).toMatch(new RegExp(`^[^:]+:${process.pid}:[0-9a-f]{6}$`));
  });

  it('shows a process that stops beating down, and forgets one that stops cleanly', async () => {
    // killed: no more beats, and no removal when it goes
    workerBeats.killed = true;
    await workerProcess!.close();
    workerProcess = null;

    await eventually(
      async () => {
        const { instances } = await figures();
        expect(instances.map((i) => [i.role, i.status])).toEqual([
          ['api', 'up'],
          ['worker', 'down'],
        ]);
        expect(instances[1]!.lastSeenAgoMs).toBeGreaterThan(3 * BEAT_MS);
      },
      5_000,
      50,
    );

    await apiProcess!.close();
    apiProcess = null;
    expect((await registry.list()).map((i) => i.role)).toEqual(['worker']);
  });
});
