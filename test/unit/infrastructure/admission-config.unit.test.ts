import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../../src/infrastructure/config.js';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';

describe('admission settings', () => {
  it('holds each budget by default, the per-address one at 200 a second with a real secret', () => {
    const config = loadConfig({ SECKILL_JWT_SECRET: SECRET });

    expect(config.rateLimit).toEqual({ points: 20, windowSeconds: 1 });
    expect(config.admission).toEqual({
      address: { points: 200, windowSeconds: 1 },
      write: { points: 10, windowSeconds: 1 },
      read: { points: 50, windowSeconds: 1 },
      ordersInFlightMax: 1024,
      trustProxy: false,
    });
  });

  it('leaves the per-address budget off with the development secret, which serves this machine alone', () => {
    expect(loadConfig({}).admission.address.points).toBe(0);
    expect(loadConfig({ SECKILL_ADDRESS_RATE_LIMIT_POINTS: '5' }).admission.address.points).toBe(5);
  });

  it('turns a budget off with 0, and refuses a negative one naming the variable', () => {
    const config = loadConfig({
      SECKILL_JWT_SECRET: SECRET,
      SECKILL_RATE_LIMIT_POINTS: '0',
      SECKILL_ADDRESS_RATE_LIMIT_POINTS: '0',
      SECKILL_ORDERS_IN_FLIGHT_MAX: '0',
    });
    expect(config.rateLimit.points).toBe(0);
    expect(config.admission.address.points).toBe(0);
    expect(config.admission.ordersInFlightMax).toBe(0);

    expect(() => loadConfig({ SECKILL_READ_RATE_LIMIT_POINTS: '-1' })).toThrow(ConfigError);
    expect(() => loadConfig({ SECKILL_READ_RATE_LIMIT_POINTS: '-1' })).toThrow(
      /SECKILL_READ_RATE_LIMIT_POINTS/,
    );
  });

  it.each([
    [undefined, false],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['loopback', 'loopback'],
    ['10.0.0.0/8, 192.168.0.1', '10.0.0.0/8, 192.168.0.1'],
  ])('reads SECKILL_TRUST_PROXY=%s as express takes it', (value, expected) => {
    const env = value === undefined ? {} : { SECKILL_TRUST_PROXY: value };
    expect(loadConfig(env).admission.trustProxy).toEqual(expected);
  });
});
