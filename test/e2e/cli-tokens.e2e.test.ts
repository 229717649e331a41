import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runSimulation } from '../../src/client/simulate.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { startMemoryService } from '../support/e2e-service.js';

const run = promisify(execFile);

const SECRET = 'cli-tokens-e2e-secret-cli-tokens-e2e-secret';
const POLICY = {
  SECKILL_JWT_ISSUER: 'https://auth.seckill.test',
  SECKILL_JWT_AUDIENCE: 'seckill-api',
  SECKILL_JWT_MAX_TTL_SECONDS: '600',
};

/** `npx seckill token …` as a shell would run it (the compiled CLI): exit code, stdout and stderr. */
const seckillToken = async (env: Record<string, string>, ...args: string[]) => seckill(env, 'token', ...args);

/** `npx seckill <command> …` as a shell would run it: exit code, stdout and stderr. */
const seckill = async (env: Record<string, string>, ...args: string[]) => {
  try {
    const { stdout, stderr } = await run('node', ['dist/src/infrastructure/main.js', ...args], {
      env: { ...process.env, SECKILL_LOG_LEVEL: 'silent', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
};

const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;

describe('npx seckill token and the token policy', () => {
  let service: SeckillService;

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_JWT_SECRET: SECRET, ...POLICY });
  });

  afterAll(async () => {
    await service.close();
  });

  it("signs with the service's issuer and audience: the service takes the token", async () => {
    const signed = await seckillToken(
      { SECKILL_JWT_SECRET: SECRET, ...POLICY },
      '--user',
      '7',
      '--ttl',
      '600',
    );
    expect(signed.code).toBe(0);
    const token = signed.stdout.trim();
    expect(claimsOf(token)).toMatchObject({ sub: '7', iss: POLICY.SECKILL_JWT_ISSUER, aud: 'seckill-api' });
    const answer = await fetch(`${service.url}/api/v1/admin/audit`, {
      headers: { authorization: `bearer ${token}` },
    });
    // a valid user token: refused for its role, not for being a bad token
    expect(answer.status).toBe(403);
  });

  it('refuses a --ttl over SECKILL_JWT_MAX_TTL_SECONDS, saying so, and prints no token', async () => {
    const refused = await seckillToken(
      { SECKILL_JWT_SECRET: SECRET, ...POLICY },
      '--user',
      '7',
      '--ttl',
      '601',
    );
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('--ttl 601 is longer than the service accepts');
    expect(refused.stderr).toContain('at most 600 s (SECKILL_JWT_MAX_TTL_SECONDS)');
  });

  it('refuses a --ttl over the default maximum of a day', async () => {
    const refused = await seckillToken({ SECKILL_JWT_SECRET: SECRET }, '--user', '7', '--ttl', '86401');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('at most 86400 s');
  });

  it("lets seckill simulate sign with the service's policy, so that its buyers are served", async () => {
    const report = await runSimulation({
      url: service.url,
      secret: SECRET,
      tokenPolicy: service.config.tokenPolicy,
      buyers: 20,
      stock: 5,
      perUserLimit: 1,
      clicks: 2,
      connections: 4,
      quiet: true,
    });
    expect(report.answers).not.toHaveProperty('INVALID_TOKEN');
    expect(report.sold).toBe(5);
    expect(report.ok).toBe(true);
  });

  it('refuses a --user the service would refuse, and says when it signs with the development secret', async () => {
    const unsecret = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => k !== 'SECKILL_JWT_SECRET'),
    );
    const bad = await seckill({ ...unsecret, SECKILL_JWT_SECRET: SECRET }, 'token', '--user', 'bad user!');
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('--user');
    const dev = await run('node', ['dist/src/infrastructure/main.js', 'token', '--user', 'ops'], {
      env: { ...unsecret, SECKILL_LOG_LEVEL: 'silent' },
    });
    expect(dev.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(dev.stderr).toContain('development secret');
  });

  it('audit --url and simulate --url send no admin token over plain HTTP to another machine', async () => {
    for (const command of ['audit', 'simulate']) {
      const refused = await seckill(
        { SECKILL_JWT_SECRET: SECRET },
        command,
        '--url',
        'http://192.0.2.7:3000',
      );
      expect({ command, code: refused.code }).toEqual({ command, code: 2 });
      expect(refused.stderr).toContain('https://');
    }
  });
});
