import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../../src/infrastructure/config.js';

describe('the metrics settings', () => {
  it('serve no metrics port, keep /metrics closed on the API port and sample every 5 s by default', () => {
    expect(loadConfig({}).metrics).toEqual({
      port: null,
      host: '127.0.0.1',
      token: null,
      sampleEveryMs: 5_000,
    });
  });

  it('refuse a metrics token shorter than 16 characters or with spaces, naming the variable', () => {
    expect(loadConfig({ SECKILL_METRICS_TOKEN: 'sixteen-chars-ok' }).metrics.token).toBe('sixteen-chars-ok');
    for (const token of ['fifteen-chars-x', 'has a space in the middle']) {
      const load = () => loadConfig({ SECKILL_METRICS_TOKEN: token });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(/SECKILL_METRICS_TOKEN/);
    }
  });
});
