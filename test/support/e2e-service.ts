import { JwtTokens, type TokenPolicy } from '../../src/adapters/http/tokens.js';
import { loadConfig } from '../../src/infrastructure/config.js';
import { createLogger } from '../../src/infrastructure/logger.js';
import { SeckillService } from '../../src/infrastructure/service.js';

/** Starts the whole service on the memory profile, on a free port, in this process. */
export const startMemoryService = async (env: Record<string, string> = {}): Promise<SeckillService> => {
  const config = loadConfig({
    SECKILL_PROFILE: 'memory',
    PORT: '0',
    SECKILL_HOST: '127.0.0.1',
    SECKILL_LOG_LEVEL: 'silent',
    SECKILL_DEMO_PRODUCT: 'false',
    ...env,
  });
  return SeckillService.start(config, { http: true, worker: true }, createLogger(config.logLevel));
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
  ): Promise<Answer> {
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
    return { status: response.status, contentType, body: parsed };
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
