import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { Logger } from '../../../src/application/index.js';
import { GaugeSampler, PrometheusMetrics } from '../../../src/infrastructure/metrics.js';

const EVERY_MS = 5_000;

const recordingLogger = () => {
  const warnings: string[] = [];
  const logger: Logger = {
    info: () => undefined,
    warn: (_d, message) => warnings.push(message),
    error: () => undefined,
  };
  return { logger, warnings };
};

const gaugeLine = async (metrics: PrometheusMetrics): Promise<string | undefined> =>
  (await metrics.registry.metrics()).split('\n').find((line) => line.startsWith('seckill_gate_stock{'));

describe('GaugeSampler', () => {
  let sampler: GaugeSampler | null = null;

  beforeEach(() => {
    jest.useFakeTimers();
  });

  afterEach(async () => {
    await sampler?.stop();
    sampler = null;
    jest.useRealTimers();
  });

  it('reads once at start and once per interval, however often the registry is scraped', async () => {
    const metrics = new PrometheusMetrics();
    let readings = 0;
    sampler = new GaugeSampler(
      () => {
        readings += 1;
        metrics.gauge('gate_stock', 100 - readings, { product: '1' });
        return Promise.resolve();
      },
      EVERY_MS,
      recordingLogger().logger,
    );
    sampler.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(readings).toBe(1);

    for (let scrape = 0; scrape < 50; scrape += 1) await metrics.registry.metrics();
    await jest.advanceTimersByTimeAsync(EVERY_MS - 1);
    expect(readings).toBe(1);
    expect(await gaugeLine(metrics)).toBe('seckill_gate_stock{product="1"} 99');

    await jest.advanceTimersByTimeAsync(1);
    expect(readings).toBe(2);
    await jest.advanceTimersByTimeAsync(3 * EVERY_MS);
    expect(readings).toBe(5);
    expect(await gaugeLine(metrics)).toBe('seckill_gate_stock{product="1"} 95');
  });

  it('logs a failed reading, keeps the last values and reads again at the next interval', async () => {
    const metrics = new PrometheusMetrics();
    const { logger, warnings } = recordingLogger();
    const outcomes = ['ok', 'fail', 'throw', 'ok'];
    let readings = 0;
    sampler = new GaugeSampler(
      () => {
        const outcome = outcomes[readings];
        readings += 1;
        if (outcome === 'throw') throw new Error('redis is away');
        if (outcome === 'fail') return Promise.reject(new Error('mysql is away'));
        metrics.gauge('gate_stock', readings, { product: '1' });
        return Promise.resolve();
      },
      EVERY_MS,
      logger,
    );
    sampler.start();
    await jest.advanceTimersByTimeAsync(0);
    await jest.advanceTimersByTimeAsync(2 * EVERY_MS);
    expect(readings).toBe(3);
    expect(warnings).toEqual([
      'metrics: could not read the sampled gauges; they keep their last values',
      'metrics: could not read the sampled gauges; they keep their last values',
    ]);
    expect(await gaugeLine(metrics)).toBe('seckill_gate_stock{product="1"} 1');

    await jest.advanceTimersByTimeAsync(EVERY_MS);
    expect(readings).toBe(4);
    expect(await gaugeLine(metrics)).toBe('seckill_gate_stock{product="1"} 4');
  });

  it('never starts a reading while the previous one is under way', async () => {
    let release: () => void = () => undefined;
    let readings = 0;
    sampler = new GaugeSampler(
      () => {
        readings += 1;
        return readings === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
      },
      EVERY_MS,
      recordingLogger().logger,
    );
    sampler.start();
    await jest.advanceTimersByTimeAsync(10 * EVERY_MS);
    expect(readings).toBe(1);
    release();
    await jest.advanceTimersByTimeAsync(EVERY_MS);
    expect(readings).toBe(2);
  });

  it('stops: waits for the reading under way, then reads no more and holds no timer', async () => {
    const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout');
    let release: () => void = () => undefined;
    let readings = 0;
    sampler = new GaugeSampler(
      () => {
        readings += 1;
        return readings === 2 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
      },
      EVERY_MS,
      recordingLogger().logger,
    );
    sampler.start();
    await jest.advanceTimersByTimeAsync(0);
    // the timer that waits for the next reading does not keep the process alive
    const timer = setTimeoutSpy.mock.results.at(-1)?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);

    await jest.advanceTimersByTimeAsync(EVERY_MS);
    expect(readings).toBe(2);
    let stopped = false;
    const stopping = sampler.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(10 * EVERY_MS);
    expect(readings).toBe(2);
    setTimeoutSpy.mockRestore();
  });
});
