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
});

describe('loadConfig: where the API listens', () => {
  it('listens on 127.0.0.1 only with the development secret, on every interface with a secret of one’s own on the real profile', () => {
    expect(loadConfig({})).toMatchObject({ usingDevelopmentSecret: true, host: '127.0.0.1' });
    expect(loadConfig({ SECKILL_PROFILE: 'real', SECKILL_JWT_SECRET: SECRET })).toMatchObject({
      usingDevelopmentSecret: false,
      host: '0.0.0.0',
    });
  });

  it('with a secret set, binds the memory profile to 127.0.0.1 by default, not every interface', () => {
    expect(loadConfig({ SECKILL_JWT_SECRET: SECRET })).toMatchObject({
      usingDevelopmentSecret: false,
      host: '127.0.0.1',
    });
    expect(loadConfig({ SECKILL_JWT_SECRET: SECRET, SECKILL_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('takes any loopback address with the development secret', () => {
    for (const host of [
      '127.0.0.1',
      '127.0.0.2',
      'localhost',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
    ])
      expect(loadConfig({ SECKILL_HOST: host }).host).toBe(host);
  });

  it('refuses any other address with the development secret, saying to set SECKILL_JWT_SECRET', () => {
    for (const host of [
      '0.0.0.0',
      '::',
      '',
      '192.0.2.7',
      'fd00::2',
      'example.com',
      '128.0.0.1',
      '127.0.0.1.example.com',
      '::ffff:10.0.0.1',
    ]) {
      const refusal = refusalOf({ SECKILL_HOST: host });
      expect({ host, refused: refusal?.message.includes('set SECKILL_JWT_SECRET') }).toEqual({
        host,
        refused: true,
      });
    }
  });

  it('takes any address with a secret of one’s own', () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.7', '127.0.0.1'])
      expect(loadConfig({ SECKILL_JWT_SECRET: SECRET, SECKILL_HOST: host }).host).toBe(host);
  });

  it('still refuses the real profile without a secret, whatever the host', () => {
    for (const host of [undefined, '127.0.0.1', '0.0.0.0'])
      expect(
        refusalOf({ SECKILL_PROFILE: 'real', ...(host === undefined ? {} : { SECKILL_HOST: host }) })
          ?.message,
      ).toBe('SECKILL_JWT_SECRET is required on the real profile');
  });
});

describe("loadConfig: the HTTP server's bounds", () => {
  it('cuts a request after 10 s, its headers after 5 s, an idle connection after 65 s, and holds 10,000 connections, by default', () => {
    expect(loadConfig({}).httpServer).toEqual({
      requestTimeoutMs: 10_000,
      headersTimeoutMs: 5_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 10_000,
    });
  });

  it('reads each bound from its variable', () => {
    expect(
      loadConfig({
        SECKILL_HTTP_REQUEST_TIMEOUT_MS: '3000',
        SECKILL_HTTP_HEADERS_TIMEOUT_MS: '2000',
        SECKILL_HTTP_KEEP_ALIVE_TIMEOUT_MS: '5000',
        SECKILL_HTTP_MAX_CONNECTIONS: '500',
      }).httpServer,
    ).toEqual({
      requestTimeoutMs: 3_000,
      headersTimeoutMs: 2_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 500,
    });
  });

  it('refuses headers that may take longer than the whole request', () => {
    expect(
      refusalOf({ SECKILL_HTTP_REQUEST_TIMEOUT_MS: '3000', SECKILL_HTTP_HEADERS_TIMEOUT_MS: '4000' })
        ?.message,
    ).toBe(
      'SECKILL_HTTP_HEADERS_TIMEOUT_MS (4000) must not be longer than SECKILL_HTTP_REQUEST_TIMEOUT_MS (3000)',
    );
  });

  it('refuses a bound of 0 (no bound at all) or below its minimum, naming the variable', () => {
    for (const [name, value] of [
      ['SECKILL_HTTP_REQUEST_TIMEOUT_MS', '0'],
      ['SECKILL_HTTP_HEADERS_TIMEOUT_MS', '99'],
      ['SECKILL_HTTP_KEEP_ALIVE_TIMEOUT_MS', '0'],
      ['SECKILL_HTTP_MAX_CONNECTIONS', '0'],
      ['SECKILL_HTTP_MAX_CONNECTIONS', 'many'],
    ] as const)
      expect(refusalOf({ [name]: value })?.message).toContain(name);
  });
});

describe('loadConfig: tracing, by the service’s variables or OpenTelemetry’s', () => {
  const ZIPKIN = 'http://127.0.0.1:9411/api/v2/spans';
  const tracingOf = (env: NodeJS.ProcessEnv) => loadConfig(env).tracingOn;

  it('is off by default, and when the exporter list names none that is Zipkin', () => {
    expect(tracingOf({})).toBeNull();
    expect(tracingOf({ OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(tracingOf({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toBeNull();
  });

  it('reads the exporter list trimmed and in any case, and the default Zipkin endpoint', () => {
    expect(tracingOf({ OTEL_TRACES_EXPORTER: ' OTLP , Zipkin ' })).toEqual({
      zipkinUrl: 'http://localhost:9411/api/v2/spans',
      sampleRatio: 1,
      serviceName: null,
    });
  });

  it('takes an empty variable for an unset one', () => {
    expect(
      tracingOf({
        OTEL_TRACES_EXPORTER: 'zipkin',
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: '',
        OTEL_TRACES_SAMPLER: '',
        OTEL_TRACES_SAMPLER_ARG: ' ',
        OTEL_SERVICE_NAME: '',
        OTEL_SDK_DISABLED: '',
      }),
    ).toEqual({ zipkinUrl: 'http://localhost:9411/api/v2/spans', sampleRatio: 1, serviceName: null });
  });

  it('is turned off by OTEL_SDK_DISABLED=true in any case, whatever else is set', () => {
    for (const disabled of ['true', 'TRUE', ' True '])
      expect(tracingOf({ SECKILL_OTEL_ZIPKIN_URL: ZIPKIN, OTEL_SDK_DISABLED: disabled })).toBeNull();
    expect(tracingOf({ SECKILL_OTEL_ZIPKIN_URL: ZIPKIN, OTEL_SDK_DISABLED: 'false' })).not.toBeNull();
  });

  it('reads the share of new traces from each sampler OpenTelemetry names', () => {
    const ratio = (sampler: string, arg?: string) =>
      tracingOf({
        OTEL_TRACES_EXPORTER: 'zipkin',
        OTEL_TRACES_SAMPLER: sampler,
        ...(arg === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: arg }),
      })?.sampleRatio;
    expect(ratio('always_on')).toBe(1);
    expect(ratio('parentbased_always_on')).toBe(1);
    expect(ratio('always_off')).toBe(0);
    expect(ratio('ParentBased_Always_Off')).toBe(0);
    expect(ratio('traceidratio', '0.1')).toBe(0.1);
    expect(ratio('parentbased_traceidratio', '0.25')).toBe(0.25);
    expect(ratio('traceidratio')).toBe(1);
  });

  it('lets the service’s own variables win where both are set', () => {
    expect(
      tracingOf({
        SECKILL_OTEL_ZIPKIN_URL: ZIPKIN,
        SECKILL_OTEL_SAMPLE_RATIO: '0.5',
        SECKILL_OTEL_SERVICE_NAME: 'api-a',
        OTEL_TRACES_EXPORTER: 'zipkin',
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'http://elsewhere:9411/api/v2/spans',
        OTEL_TRACES_SAMPLER: 'always_off',
        OTEL_SERVICE_NAME: 'other',
      }),
    ).toEqual({ zipkinUrl: ZIPKIN, sampleRatio: 0.5, serviceName: 'api-a' });
  });

  it('refuses a sampler it cannot honour, a ratio outside 0 to 1 and an endpoint that is no URL, naming the variable', () => {
    const on = { OTEL_TRACES_EXPORTER: 'zipkin' };
    expect(refusalOf({ ...on, OTEL_TRACES_SAMPLER: 'jaeger_remote' })?.message).toContain(
      'OTEL_TRACES_SAMPLER="jaeger_remote"',
    );
    expect(
      refusalOf({ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })?.message,
    ).toContain('OTEL_TRACES_SAMPLER_ARG="1.5"');
    expect(refusalOf({ ...on, OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'not a url' })?.message).toContain(
      'OTEL_EXPORTER_ZIPKIN_ENDPOINT',
    );
  });

  it('does not read a variable that does not matter: bad ones stop nothing while tracing is off or overridden', () => {
    const bad = {
      OTEL_TRACES_SAMPLER: 'jaeger_remote',
      OTEL_TRACES_SAMPLER_ARG: 'lots',
      OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'not a url',
    };
    expect(tracingOf(bad)).toBeNull();
    expect(
      tracingOf({ ...bad, SECKILL_OTEL_ZIPKIN_URL: ZIPKIN, SECKILL_OTEL_SAMPLE_RATIO: '0.1' })?.sampleRatio,
    ).toBe(0.1);
  });
});
