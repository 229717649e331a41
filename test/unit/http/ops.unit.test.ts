import { Agent, createServer, get as httpGet, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type HealthCheck, type Logger, ReadinessProbe } from '../../../src/application/index.js';
import { createOpsApp, type OpsDependencies } from '../../../src/adapters/http/ops.js';
import { JwtTokens } from '../../../src/adapters/http/tokens.js';

const SECRET = 'unit-test-secret-unit-test-secret-0123';
const METRICS_TOKEN = 'scrape-me-0123456789abcdef';
const EXPOSITION = '# HELP seckill_up\nseckill_up 1\n';

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const healthy = (name: string): HealthCheck => ({ name, check: () => Promise.resolve() });
const failing = (name: string, message: string): HealthCheck => ({
  name,
  check: () => Promise.reject(new Error(message)),
});
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('the ops routes', () => {
  const tokens = new JwtTokens(SECRET);
  let server: Server | null = null;

  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = null;
  });

  const serve = async ({
    health = [],
    ...deps
  }: Partial<OpsDependencies> & { health?: HealthCheck[] }): Promise<string> => {
    const app = createOpsApp(
      {
        readinessProbe: new ReadinessProbe(health, { timeoutMs: 2_000, maxAgeMs: 1_000 }),
        observer: {
          render: () => Promise.resolve({ contentType: 'text/plain; version=0.0.4', body: EXPOSITION }),
        },
        metrics: { kind: 'open' },
        readiness: { kind: 'admins', tokens },
        ...deps,
      },
      quiet,
    );
    const listening = createServer(app);
    server = listening;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  };

  const get = async (url: string, authorization?: string) => {
    const response = await fetch(url, authorization ? { headers: { authorization } } : {});
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get('content-type') ?? '',
      challenge: response.headers.get('www-authenticate'),
      text,
      json: (): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>,
    };
  };

  describe('/readyz', () => {
    const checks = [healthy('redis'), failing('mysql', 'connect ECONNREFUSED 10.1.2.3:3306 as seckill_app')];

    it('tells anyone whether each dependency is ok or failing, and nothing more', async () => {
      const base = await serve({ health: checks });
      for (const authorization of [
        undefined,
        `Bearer ${await tokens.sign({ userId: 'buyer', role: 'user' })}`,
        'Bearer forged',
      ]) {
        const answer = await get(`${base}/readyz`, authorization);
        expect(answer.status).toBe(503);
        expect(answer.json()).toEqual({ status: 'not ready', checks: { redis: 'ok', mysql: 'failing' } });
        expect(answer.text).not.toContain('ECONNREFUSED');
      }
    });

    it("gives an admin token the failing dependencies' messages too", async () => {
      const base = await serve({ health: checks });
      const admin = await tokens.sign({ userId: 'ops', role: 'admin' });
      const answer = await get(`${base}/readyz`, `Bearer ${admin}`);
      expect(answer.status).toBe(503);
      expect(answer.json()).toEqual({
        status: 'not ready',
        checks: { redis: 'ok', mysql: 'failing' },
        details: { mysql: 'connect ECONNREFUSED 10.1.2.3:3306 as seckill_app' },
      });
    });

    it('gives everyone the messages where the operator alone reaches it', async () => {
      const base = await serve({ health: checks, readiness: { kind: 'everyone' } });
      expect((await get(`${base}/readyz`)).json()).toMatchObject({
        details: { mysql: 'connect ECONNREFUSED 10.1.2.3:3306 as seckill_app' },
      });
    });

    it('asked 100,000 times, asks its dependencies at most about once a second', async () => {
      const asked = { redis: 0, mysql: 0 };
      const counted = (name: keyof typeof asked): HealthCheck => ({
        name,
        check: () => {
          asked[name] += 1;
          return Promise.resolve();
        },
      });
      const base = await serve({ health: [counted('redis'), counted('mysql')] });
      const startedAt = performance.now();
      let sent = 0;
      const statuses = new Map<number, number>();
      const agent = new Agent({ keepAlive: true, maxSockets: 64 });
      const readyz = () =>
        new Promise<number>((resolve, reject) =>
          httpGet(`${base}/readyz`, { agent }, (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          }).on('error', reject),
        );
      const caller = async () => {
        while (sent < 100_000) {
          sent += 1;
          const status = await readyz();
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: 64 }, caller));
      agent.destroy();
      const seconds = (performance.now() - startedAt) / 1_000;
      expect(Object.fromEntries(statuses)).toEqual({ 200: 100_000 });
      // one round when the first call came, then at most one for each second that followed
      for (const count of Object.values(asked)) {
        expect(count).toBeGreaterThanOrEqual(1);
        expect(count).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      }
    }, 180_000);

    it('is ready when every check answers', async () => {
      const base = await serve({ health: [healthy('redis'), healthy('kafka')] });
      const answer = await get(`${base}/readyz`);
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ status: 'ready', checks: { redis: 'ok', kafka: 'ok' } });
    });
  });

  describe('/metrics behind a credential', () => {
    it('answers the exposition to the token as a bearer credential or as the Basic password', async () => {
      const base = await serve({ metrics: { kind: 'credential', token: METRICS_TOKEN } });
      for (const authorization of [
        `Bearer ${METRICS_TOKEN}`,
        basic('prometheus', METRICS_TOKEN),
        basic('', METRICS_TOKEN),
      ]) {
        const answer = await get(`${base}/metrics`, authorization);
        expect(answer.status).toBe(200);
        expect(answer.type).toMatch(/^text\/plain/);
        expect(answer.text).toBe(EXPOSITION);
      }
    });

    it('refuses a missing or wrong credential with a 401 problem and a challenge', async () => {
      const base = await serve({ metrics: { kind: 'credential', token: METRICS_TOKEN } });
      const missing = await get(`${base}/metrics`);
      expect(missing.status).toBe(401);
      expect(missing.type).toMatch(/^application\/problem\+json/);
      expect(missing.json()).toMatchObject({ code: 'MISSING_CREDENTIAL' });
      expect(missing.challenge).toBe('Bearer realm="seckill metrics", Basic realm="seckill metrics"');
      const admin = `Bearer ${await tokens.sign({ userId: 'ops', role: 'admin' })}`;
      for (const authorization of [
        `Bearer ${METRICS_TOKEN}x`,
        `Bearer ${METRICS_TOKEN.slice(1)}`,
        basic(METRICS_TOKEN, 'wrong'),
        basic('prometheus', `${METRICS_TOKEN} `),
        `Basic ${Buffer.from(METRICS_TOKEN).toString('base64')}`,
        `Token ${METRICS_TOKEN}`,
        admin,
      ]) {
        const wrong = await get(`${base}/metrics`, authorization);
        expect({ authorization, status: wrong.status, body: wrong.json() }).toMatchObject({
          authorization,
          status: 401,
          body: { code: 'INVALID_CREDENTIAL' },
        });
        expect(wrong.challenge).toMatch(/^Bearer /);
        expect(wrong.text).not.toContain('seckill_up');
      }
    });

    it('is closed without a configured credential, and says how to scrape instead', async () => {
      const base = await serve({ metrics: { kind: 'closed' } });
      const answer = await get(`${base}/metrics`, `Bearer ${METRICS_TOKEN}`);
      expect(answer.status).toBe(404);
      expect(answer.type).toMatch(/^application\/problem\+json/);
      expect(answer.json()).toMatchObject({ code: 'METRICS_NOT_SERVED' });
      expect(answer.json()['detail']).toMatch(/SECKILL_METRICS_TOKEN.*SECKILL_METRICS_PORT/);
    });
  });

  it('answers anything else on the metrics listener with a 404 problem', async () => {
    const base = await serve({});
    const answer = await get(`${base}/api/v1/products/1`);
    expect(answer.status).toBe(404);
    expect(answer.type).toMatch(/^application\/problem\+json/);
    expect((await get(`${base}/metrics`)).text).toBe(EXPOSITION);
  });
});
