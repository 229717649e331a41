import { afterEach, describe, expect, it } from '@jest/globals';
import type { InstanceBeat } from '../../../src/application/index.js';
import { type AppHarness, startApp } from '../../support/app-harness.js';

const beatOf = (instanceId: string, more: Partial<InstanceBeat> = {}): InstanceBeat => ({
  instanceId,
  role: 'api',
  pid: 1,
  host: 'host-a',
  startedAt: '2030-01-01T00:00:00.000Z',
  beatEveryMs: 1_000,
  ready: { redis: 'ok', mysql: 'ok', kafka: 'ok' },
  counts: { accepted: 0, rejected: 0, failed: 0, committed: 0, released: 0 },
  ...more,
});

describe('SaleDashboard: the instances', () => {
  let app: AppHarness;
  afterEach(() => app.close());

  const shown = async () =>
    Object.fromEntries((await app.dashboard.gather()).instances.map((i) => [i.instanceId, i.status]));

  it('shows an instance up while it beats with every dependency ready, degraded when one fails', async () => {
    app = await startApp();
    await app.instances.beat(beatOf('api-1'));
    await app.instances.beat(beatOf('api-2', { ready: { redis: 'ok', mysql: 'failing', kafka: 'ok' } }));

    expect(await shown()).toEqual({ 'api-1': 'up', 'api-2': 'degraded' });
  });

  it('shows an instance down once it has missed three beats, and up again when it beats', async () => {
    app = await startApp();
    await app.instances.beat(beatOf('worker-1', { role: 'worker', beatEveryMs: 500 }));

    app.clock.advance(1_500);
    expect(await shown()).toEqual({ 'worker-1': 'up' });
    app.clock.advance(1);
    expect(await shown()).toEqual({ 'worker-1': 'down' });

    await app.instances.beat(beatOf('worker-1', { role: 'worker', beatEveryMs: 500 }));
    expect(await shown()).toEqual({ 'worker-1': 'up' });
  });

  it("adds up every instance's counts, a down one's included, and lists them in a stable order", async () => {
    app = await startApp();
    const counts = (accepted: number, committed: number) => ({
      accepted,
      rejected: 2 * accepted,
      failed: 1,
      committed,
      released: 0,
    });
    await app.instances.beat(beatOf('w', { role: 'worker', host: 'b', counts: counts(0, 40) }));
    await app.instances.beat(beatOf('a2', { host: 'b', pid: 7, counts: counts(25, 0) }));
    app.clock.advance(10_000);
    await app.instances.beat(beatOf('a1', { host: 'a', pid: 9, counts: counts(30, 0) }));

    const figures = await app.dashboard.gather();

    expect(figures.instances.map((i) => [i.instanceId, i.status])).toEqual([
      ['a1', 'up'],
      ['a2', 'down'],
      ['w', 'down'],
    ]);
    expect(figures.totals).toEqual({ accepted: 55, rejected: 110, failed: 3, committed: 40, released: 0 });
  });
});
