import { z } from 'zod';
import { type ConfigOf, type ParsedOf, placeValues, SETTINGS, settingsOf } from './config-settings.js';
import { OtelVariableError, tracingFrom } from './otel-env.js';

/** The service's configuration: the shape of SETTINGS (config-settings.ts), every value defined. */
export type Config = ConfigOf<typeof SETTINGS>;

/** What the environment gives, before the derived values are worked out. */
type Parsed = ParsedOf<typeof SETTINGS>;

export type Profile = Config['profile'];

/** Calls allowed per key per window. */
export type Budget = Config['rateLimit'];

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const DEVELOPMENT_SECRET = 'seckill-development-secret-not-for-production';

/**
 * Whether `host` is this machine only: 127.0.0.0/8, ::1 (IPv4-mapped ::ffff:127.x.y.z too) and localhost,
 * however spelled (the URL parser writes each address one way: `127.1` and `0:0:0:0:0:0:0:1` are loopback,
 * `127.0.0.1.example.com` is a name anyone may own).
 */
export const isLoopback = (host: string): boolean => {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  let hostname: string;
  try {
    hostname = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return false;
  }
  return (
    hostname === 'localhost' ||
    /^127\.\d+\.\d+\.\d+$/.test(hostname) ||
    /^\[(::1|::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4})\]$/.test(hostname)
  );
};

/**
 * Where the API listens. The development secret is public (it is in this file): a service that signs with it
 * serves this machine only, by default and by force. The memory profile keeps nothing when it stops, a demo's
 * or a test's: it too serves this machine unless told otherwise, whatever the secret. The real profile with a
 * secret of its own is a deployment: every interface.
 */
const hostOf = (p: Parsed): string => {
  if (p.jwtSecret) return p.host ?? (p.profile === 'real' ? '0.0.0.0' : '127.0.0.1');
  const host = p.host ?? '127.0.0.1';
  if (!isLoopback(host))
    throw new ConfigError(
      `SECKILL_HOST=${JSON.stringify(host)} would let other machines in while tokens are signed with the public development secret (anyone could mint an admin token): set SECKILL_JWT_SECRET to a secret of your own (at least 32 characters), or listen on 127.0.0.1`,
    );
  return host;
};

const httpServerOf = ({ httpServer }: Parsed): Config['httpServer'] => {
  // Node refuses a server whose headers may take longer than the whole request
  if (httpServer.headersTimeoutMs > httpServer.requestTimeoutMs)
    throw new ConfigError(
      `SECKILL_HTTP_HEADERS_TIMEOUT_MS (${httpServer.headersTimeoutMs}) must not be longer than SECKILL_HTTP_REQUEST_TIMEOUT_MS (${httpServer.requestTimeoutMs})`,
    );
  return httpServer;
};

/** The budgets and the bound on orders in flight (docs/operations.md, Admission control). */
const admissionOf = (p: Parsed): Config['admission'] => ({
  ...p.admission,
  address: {
    ...p.admission.address,
    // with the development secret the service listens on loopback alone: every client has a local address,
    // and one budget for all of them would be a budget for the whole machine
    points: p.admission.address.points ?? (p.jwtSecret ? 200 : 0),
  },
});

/** Every setting at once, keyed by its variable: a bad value is named by its variable. */
const ENV_SCHEMA = z.object(
  Object.fromEntries(settingsOf().map(({ setting }) => [setting.env, setting.schema])),
);

const parse = (env: NodeJS.ProcessEnv): Parsed => {
  const parsed = ENV_SCHEMA.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  // each value parsed by its setting's schema, put where SETTINGS puts it: what ParsedOf describes
  return placeValues(parsed.data) as Parsed;
};

/** Tracing's settings, the service's first, then OpenTelemetry's standard variables; null: off. */
const tracingOf = ({ tracing }: Parsed): Config['tracingOn'] => {
  try {
    return tracingFrom(tracing, tracing.standard);
  } catch (error) {
    if (error instanceof OtelVariableError) throw new ConfigError(error.message);
    throw error;
  }
};

/** Reads the environment into a typed config; a bad value stops the process with the variable named. */
export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => {
  const p = parse(env);
  if (p.profile === 'real' && !p.jwtSecret)
    throw new ConfigError('SECKILL_JWT_SECRET is required on the real profile');
  return {
    ...p,
    host: hostOf(p),
    serviceUrl: p.serviceUrl ?? `http://127.0.0.1:${p.port}`,
    mysql: { ...p.mysql, poolMin: Math.min(p.mysql.poolMin, p.mysql.poolMax) },
    schedulerRedisUrl: p.schedulerRedisUrl ?? p.redisUrl,
    jwtSecret: p.jwtSecret ?? DEVELOPMENT_SECRET,
    usingDevelopmentSecret: !p.jwtSecret,
    tracingOn: tracingOf(p),
    httpServer: httpServerOf(p),
    demoProduct: p.demoProduct ?? p.profile === 'memory',
    admission: admissionOf(p),
  };
};
