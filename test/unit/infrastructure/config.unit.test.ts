import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../../src/infrastructure/config.js';

const SECRET = 'config-unit-secret-config-unit-secret-0123';

/** What loadConfig throws for this environment (a ConfigError), or null when it loads. */
const refusalOf = (env: NodeJS.ProcessEnv): ConfigError | null => {
  try {
    loadConfig(env);
    return null;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
};

describe('loadConfig: the token policy', () => {
  it('lets a token live a day at most, and asks for no issuer or audience, by default', () => {
    expect(loadConfig({}).tokenPolicy).toEqual({ maxTtlSeconds: 86_400, issuer: null, audience: null });
  });

  it('reads the maximum lifetime, the issuer and the audience', () => {
    expect(
      loadConfig({
        SECKILL_JWT_MAX_TTL_SECONDS: '900',
        SECKILL_JWT_ISSUER: 'https://auth.example',
        SECKILL_JWT_AUDIENCE: 'seckill',
      }).tokenPolicy,
    ).toEqual({ maxTtlSeconds: 900, issuer: 'https://auth.example', audience: 'seckill' });
  });

  it('refuses a maximum lifetime under a minute, or not a whole number, naming the variable', () => {
    for (const value of ['59', '0', '-1', '1.5', 'a day'])
      expect(refusalOf({ SECKILL_JWT_MAX_TTL_SECONDS: value })?.message).toContain(
        'SECKILL_JWT_MAX_TTL_SECONDS',
      );
  });

  it('refuses an empty issuer or audience rather than taking it for none', () => {
    expect(refusalOf({ SECKILL_JWT_ISSUER: '' })?.message).toContain('SECKILL_JWT_ISSUER');
    expect(refusalOf({ SECKILL_JWT_AUDIENCE: '' })?.message).toContain('SECKILL_JWT_AUDIENCE');
  });

  it('keeps refusing the real profile without a secret', () => {
    expect(refusalOf({ SECKILL_PROFILE: 'real' })?.message).toBe(
      'SECKILL_JWT_SECRET is required on the real profile',
    );
    expect(loadConfig({ SECKILL_PROFILE: 'real', SECKILL_JWT_SECRET: SECRET }).usingDevelopmentSecret).toBe(
      false,
    );
  });
});
