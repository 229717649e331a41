import { request as httpRequest } from 'node:http';
import { JwtTokens, type TokenPolicy } from '../../src/adapters/http/tokens.js';
import { ThreadHistoryFolds } from '../../src/adapters/system/thread-history-folds.js';
import { loadConfig } from '../../src/infrastructure/config.js';
import type { ContainerOverrides } from '../../src/infrastructure/container.js';
import { createLogger } from '../../src/infrastructure/logger.js';
import { type Roles, SeckillService } from '../../src/infrastructure/service.js';
import { BUILT_FOLD_THREAD } from './histories.js';

/**
 * Every buyer of a test comes from 127.0.0.1: the per-address budget and the read and write budgets are off,
 * as for any load test from one machine. The tests of those budgets turn them on.
 */
export const ONE_MACHINE: Readonly<Record<string, string>> = {
  SECKILL_ADDRESS_RATE_LIMIT_POINTS: '0',
  SECKILL_READ_RATE_LIMIT_POINTS: '0',
  SECKILL_WRITE_RATE_LIMIT_POINTS: '0',
};

/** The audit's thread as the service makes it, from the built script (a service started here runs from source). */
export const BUILT_THREADS: ContainerOverrides = {
  historyFolds: () => new ThreadHistoryFolds(BUILT_FOLD_THREAD),
};

/** Starts the service on the memory profile (API and worker unless told otherwise), on a free port, in this process. */
export const startMemoryService = async (
  env: Record<string, string> = {},
  overrides: ContainerOverrides = {},
  roles: Roles = { http: true, worker: true },
): Promise<SeckillService> => {
  const config = loadConfig({
    SECKILL_PROFILE: 'memory',
    PORT: '0',
    SECKILL_HOST: '127.0.0.1',
    SECKILL_LOG_LEVEL: 'silent',
    SECKILL_DEMO_PRODUCT: 'false',
    ...ONE_MACHINE,
    ...env,
  });
  return SeckillService.start(config, roles, createLogger(config.logLevel), {
    ...BUILT_THREADS,
    ...overrides,
  });
};

export type Answer = { status: number; contentType: string; body: Record<string, unknown> };

/** A small client for the API: JSON in, JSON (or problem+json) out. */
export class ApiClient {
  private readonly tokens: JwtTokens;

  /** `policy`: the service's (`service.config.tokenPolicy`) when it asks for an iss, an aud or short lives */
  constructor(
    readonly baseUrl: string,
    secret: string,
    policy: Partial<TokenPolicy> = {},
  ) {
    this.tokens = new JwtTokens(secret, policy);
  }

  token(userId: string, role: 'user' | 'admin' = 'user', ttlSeconds = 3600): Promise<string> {
    return this.tokens.sign({ userId, role }, ttlSeconds);
  }

  async request(
    method: string,
    path: string,
    options: { token?: string; json?: unknown; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer & { headers: Headers }> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers['authorization'] = `Bearer ${options.token}`;
    let body: string | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    let parsed: Record<string, unknown> = {};
    if (text && contentType.includes('json')) parsed = JSON.parse(text) as Record<string, unknown>;
    return { status: response.status, contentType, body: parsed, headers: response.headers };
  }

  async listProduct(terms: Record<string, unknown>): Promise<number> {
    const answer = await this.request('POST', '/api/v1/admin/products', {
      token: await this.token('admin-1', 'admin'),
      json: terms,
    });
    if (answer.status !== 201)
      throw new Error(`listing failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body['productId'] as number;
  }
}

/** Runs tasks with at most `concurrency` in flight; results keep the tasks' order. */
export const inParallel = async <T>(
  tasks: ReadonlyArray<() => Promise<T>>,
  concurrency: number,
): Promise<T[]> => {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, tasks.length) }, async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  });
  await Promise.all(lanes);
  return results;
};

/**
 * One request from another local address (Linux answers every 127.x address on the loopback device): a
 * buyer on another machine, as far as the service can tell without a proxy.
 */
export const requestFrom = (
  localAddress: string,
  url: string,
  options: { method: string; token: string; json: unknown },
): Promise<Answer & { headers: Record<string, string | string[] | undefined> }> =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify(options.json);
    const req = httpRequest(
      url,
      {
        method: options.method,
        localAddress,
        headers: {
          authorization: `Bearer ${options.token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const contentType = res.headers['content-type'] ?? '';
          resolve({
            status: res.statusCode ?? 0,
            contentType,
            body: text && contentType.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : {},
            headers: res.headers,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
