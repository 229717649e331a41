import { describe, expect, it } from '@jest/globals';
import type { RebuildProjections } from '../../../src/application/index.js';
import type { Application } from '../../../src/infrastructure/compose.js';
import { loadConfig } from '../../../src/infrastructure/config.js';
import { APPLICATION, buildContainer, REBUILD } from '../../../src/infrastructure/container.js';
import { RecordingMetrics, SilentLogger, TestClock } from '../../support/app-doubles.js';

const memoryContainer = () =>
  buildContainer(loadConfig({ SECKILL_PROFILE: 'memory' }), {
    logger: new SilentLogger(),
    metrics: new RecordingMetrics(),
    resources: null,
    overrides: { clock: () => new TestClock('2030-06-01T10:00:00.000Z') },
  });

describe('one container builds the service, the harness and the projections rebuild', () => {
  it('rebuilds the orders projection from the events the same container wrote, and finds it equal', async () => {
    const container = memoryContainer();
    const app = container.get<Application>(APPLICATION);
    const { productId } = await app.products.list(
      { name: 'widget', stock: 5, perUserLimit: 1, maxPerOrder: 1, saleStartsAt: null, saleEndsAt: null },
      'list',
    );
    const answers = await Promise.all(
      ['ada', 'bob', 'cy'].map((userId) =>
        app.placeOrder.execute({ userId, productId, quantity: 1, correlationId: `c-${userId}` }),
      ),
    );
    expect(answers.every((a) => a.ok)).toBe(true);

    const report = await container.get<RebuildProjections>(REBUILD).run();

    expect(report.ordersWritten).toBe(3);
    expect(report.comparison).toMatchObject({ liveRows: 3, rebuiltRows: 3, differing: 0 });
  });

  it("gives the application what an override made of the profile's adapter", () => {
    const clock = new TestClock('2031-01-01T00:00:00.000Z');
    const container = buildContainer(loadConfig({ SECKILL_PROFILE: 'memory' }), {
      logger: new SilentLogger(),
      metrics: new RecordingMetrics(),
      resources: null,
      overrides: { clock: () => clock },
    });

    expect(container.get<Application>(APPLICATION).ports.clock).toBe(clock);
  });
});
