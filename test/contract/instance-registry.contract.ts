import { describe, expect, it } from '@jest/globals';
import type { InstanceBeat, InstanceRegistry } from '../../src/application/index.js';
import { eventually, freshPerTest, type Teardown, uniqueName } from '../support/contract-helpers.js';

export type RegistryOptions = Readonly<{ retentionMs: number }>;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const beatOf = (instanceId: string, more: Partial<InstanceBeat> = {}): InstanceBeat => ({
  instanceId,
  role: 'api',
  pid: 4242,
  host: 'host-a',
  startedAt: '2030-01-01T00:00:00.000Z',
  beatEveryMs: 1_000,
  ready: { redis: 'ok', mysql: 'ok' },
  counts: { accepted: 0, rejected: 0, failed: 0, committed: 0, released: 0 },
  ...more,
});

export const instanceRegistryContract = (
  name: string,
  make: (options: RegistryOptions) => Promise<InstanceRegistry>,
  teardown?: Teardown<InstanceRegistry>,
) =>
  describe(`InstanceRegistry contract: ${name}`, () => {
    const registry = freshPerTest(() => make({ retentionMs: 60_000 }), teardown);

    it('lists an instance with all it said, seen just now', async () => {
      const beat = beatOf(uniqueName('api'), {
        role: 'worker',
        ready: { redis: 'ok', kafka: 'failing' },
        counts: { accepted: 5, rejected: 7, failed: 1, committed: 3, released: 2 },
      });

      await registry().beat(beat);

      const [seen, ...others] = await registry().list();
      expect(others).toEqual([]);
      expect(seen).toMatchObject(beat);
      expect(seen!.lastSeenAgoMs).toBeGreaterThanOrEqual(0);
      expect(seen!.lastSeenAgoMs).toBeLessThan(1_000);
      expect(Date.parse(seen!.lastSeenAt)).not.toBeNaN();
    });

    it("keeps an instance's last beat only", async () => {
      const instanceId = uniqueName('api');
      await registry().beat(beatOf(instanceId));
      await registry().beat(
        beatOf(instanceId, { counts: { accepted: 9, rejected: 1, failed: 0, committed: 0, released: 0 } }),
      );

      const listed = await registry().list();
      expect(listed).toHaveLength(1);
      expect(listed[0]!.counts.accepted).toBe(9);
    });

    it('lists every instance that beat, each under its own id', async () => {
      const ids = Array.from({ length: 40 }, (_, n) => uniqueName(`instance-${n}`));

      await Promise.all(ids.map((id, n) => registry().beat(beatOf(id, { pid: n }))));

      const listed = await registry().list();
      expect(listed.map((i) => i.instanceId).sort()).toEqual([...ids].sort());
      expect(new Set(listed.map((i) => i.pid)).size).toBe(40);
    });

    it('tells how long ago an instance that stopped beating was last seen, and a beat makes it new again', async () => {
      const silent = uniqueName('silent');
      await registry().beat(beatOf(silent));
      const firstSeenAt = (await registry().list())[0]!.lastSeenAt;

      await pause(300);
      const [aged] = await registry().list();
      expect(aged!.lastSeenAgoMs).toBeGreaterThanOrEqual(250);
      expect(aged!.lastSeenAt).toBe(firstSeenAt);

      await registry().beat(beatOf(silent));
      const [fresh] = await registry().list();
      expect(fresh!.lastSeenAgoMs).toBeLessThan(250);
      expect(Date.parse(fresh!.lastSeenAt)).toBeGreaterThan(Date.parse(firstSeenAt));
    });

    it('forgets an instance that removed itself, and a removal of an unknown one is harmless', async () => {
      const [leaving, staying] = [uniqueName('leaving'), uniqueName('staying')];
      await registry().beat(beatOf(leaving));
      await registry().beat(beatOf(staying));

      await registry().remove(leaving);
      await registry().remove(uniqueName('never-seen'));

      expect((await registry().list()).map((i) => i.instanceId)).toEqual([staying]);
    });

    describe('with a short retention', () => {
      const short = freshPerTest(() => make({ retentionMs: 400 }), teardown);

      it('forgets an instance silent for longer than the retention, and keeps those that beat', async () => {
        const [gone, alive] = [uniqueName('gone'), uniqueName('alive')];
        await short().beat(beatOf(gone));
        expect((await short().list()).map((i) => i.instanceId)).toEqual([gone]);

        await eventually(
          async () => {
            await short().beat(beatOf(alive));
            expect((await short().list()).map((i) => i.instanceId)).toEqual([alive]);
          },
          5_000,
          50,
        );
      });
    });
  });
