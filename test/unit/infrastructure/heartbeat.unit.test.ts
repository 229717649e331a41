import { afterEach, describe, expect, it } from '@jest/globals';
import type { HealthCheck, InstanceBeat, InstanceCounts } from '../../../src/application/index.js';
import { MemoryInstanceRegistry } from '../../../src/adapters/memory/memory-instance-registry.js';
import { SystemClock } from '../../../src/adapters/system/system-clock.js';
import { InstanceHeartbeat } from '../../../src/infrastructure/heartbeat.js';
import { SilentLogger } from '../../support/app-doubles.js';
import { eventually } from '../../support/contract-helpers.js';

const EVERY_MS = 100;
const IDENTITY = {
  instanceId: 'host-a:4242:abc123',
  role: 'worker',
  pid: 4242,
  host: 'host-a',
  startedAt: '2030-01-01T00:00:00.000Z',
} as const;

const check = (name: string, outcome: 'ok' | 'failing' | 'hangs'): HealthCheck => ({
  name,
  check: () => {
    if (outcome === 'ok') return Promise.resolve();
    if (outcome === 'failing') return Promise.reject(new Error(`${name} refused the connection`));
    return new Promise<void>(() => undefined);
  },
});

/** A registry whose beats fail while `down` is set, as Redis's would while it is unreachable. */
class FlakyRegistry extends MemoryInstanceRegistry {
  down = false;
  attempts = 0;

  override beat(beat: InstanceBeat): Promise<void> {
    this.attempts += 1;
    return this.down ? Promise.reject(new Error('connect ECONNREFUSED')) : super.beat(beat);
  }
}

describe('InstanceHeartbeat', () => {
  let heartbeat: InstanceHeartbeat | null = null;

  afterEach(async () => {
    await heartbeat?.stop();
    heartbeat = null;
  });

  const start = (registry: MemoryInstanceRegistry, health: HealthCheck[], logger = new SilentLogger()) => {
    let accepted = 0;
    const counts = (): Promise<InstanceCounts> => {
      accepted += 10;
      return Promise.resolve({ accepted, rejected: 3, failed: 1, committed: 2, released: 0 });
    };
    heartbeat = new InstanceHeartbeat({
      registry,
      identity: IDENTITY,
      everyMs: EVERY_MS,
      health,
      counts,
      logger,
    });
    heartbeat.start();
    return heartbeat;
  };

  it('says who this process is, how each dependency answers and what it has counted, on every beat', async () => {
    const registry = new MemoryInstanceRegistry(new SystemClock());
    start(registry, [check('redis', 'ok'), check('mysql', 'failing')]);

    await eventually(async () => {
      const [seen] = await registry.list();
      expect(seen).toMatchObject({
        ...IDENTITY,
        beatEveryMs: EVERY_MS,
        ready: { redis: 'ok', mysql: 'failing' },
        counts: { rejected: 3, failed: 1, committed: 2, released: 0 },
      });
      expect(seen!.counts.accepted).toBeGreaterThanOrEqual(30);
    }, 2_000);
  });

  it('keeps beating on time while a dependency hangs: the instance reads degraded, never down', async () => {
    const registry = new MemoryInstanceRegistry(new SystemClock());
    start(registry, [check('redis', 'ok'), check('kafka', 'hangs')]);

    await eventually(
      async () => expect((await registry.list())[0]?.ready).toEqual({ redis: 'ok', kafka: 'failing' }),
      2_000,
    );
    for (let look = 0; look < 10; look += 1) {
      const [seen] = await registry.list();
      expect(seen!.lastSeenAgoMs).toBeLessThan(2 * EVERY_MS);
      await new Promise((resolve) => setTimeout(resolve, EVERY_MS / 2));
    }
  });

  it('survives a registry that fails, says so once per outage, and says when beats get through again', async () => {
    const registry = new FlakyRegistry(new SystemClock());
    registry.down = true;
    const logger = new SilentLogger();
    start(registry, [], logger);

    await eventually(() => expect(registry.attempts).toBeGreaterThanOrEqual(4), 2_000);
    expect(logger.entries.filter((e) => e.level === 'warn')).toHaveLength(1);
    expect(await registry.list()).toEqual([]);

    registry.down = false;
    await eventually(async () => expect(await registry.list()).toHaveLength(1), 2_000);
    expect(logger.entries.map((e) => e.level)).toEqual(['warn', 'info']);
  });

  it('removes the instance when it stops: a process that stops cleanly is not shown down', async () => {
    const registry = new MemoryInstanceRegistry(new SystemClock());
    const beating = start(registry, []);
    await eventually(async () => expect(await registry.list()).toHaveLength(1), 2_000);

    await beating.stop();
    heartbeat = null;

    expect(await registry.list()).toEqual([]);
    // and no beat comes after it
    await new Promise((resolve) => setTimeout(resolve, 3 * EVERY_MS));
    expect(await registry.list()).toEqual([]);
  });
});
