import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { ORDER_ANSWER_CODES } from '../adapters/http/order-rejections.js';
import { field, parseJson } from './service-calls.js';
import { type Accepted, type Buyer, bump, type SimulationOptions } from './simulation.types.js';

// ---- autocannon (v9 ships no type declarations: the part used here, typed locally) ----

/** One click: a buyer and the Idempotency-Key its order carries (and carries again when it is retried). */
type Job = Readonly<{ buyer: number; key: string }>;
type FloodContext = { at?: number };
type CannonRequest = {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: CannonRequest, context: FloodContext) => CannonRequest | null;
  onResponse?: (
    status: number,
    body: string,
    context: FloodContext,
    headers: Record<string, unknown>,
  ) => void;
};
type CannonOptions = {
  url: string;
  connections: number;
  amount: number;
  timeout: number;
  sampleInt: number;
  requests: CannonRequest[];
};
type CannonHistogram = Readonly<{ average: number; max: number; total: number; p50: number; p99: number }>;
export type CannonResult = Readonly<{
  duration: number;
  errors: number;
  timeouts: number;
  latency: CannonHistogram;
  requests: CannonHistogram & Readonly<{ sent: number }>;
}>;
type CannonInstance = { stop(): void };
type Autocannon = (
  options: CannonOptions,
  done: (error: Error | null, result: CannonResult) => void,
) => CannonInstance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// ---- the flood ----

/** How the flood counts an answer: ACCEPTED, a refusal code the API answers with, or `HTTP <status> [code]`. */
export const codeOf = (status: number, body: unknown): string => {
  if (status === 202) return 'ACCEPTED';
  const code = field(body, 'code');
  if (typeof code === 'string' && ORDER_ANSWER_CODES.has(code)) return code;
  return `HTTP ${status}${typeof code === 'string' ? ` ${code}` : ''}`;
};

const shuffle = <T>(items: T[]): T[] => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
};

export type Flood = Readonly<{
  result: CannonResult;
  /** each click's last answer, by code */
  answers: Record<string, number>;
  accepted: Accepted[];
  /** clicks answered, retries included */
  answered: number;
  /** retries sent, and the clicks a retry got an answer for */
  retries: Readonly<{ sent: number; answered: number }>;
}>;

/** A click's last answer: its code, and the order when it was accepted. */
type Outcome = { code: string; orderId?: string };

const RETRY_TIMEOUT_MS = 10_000;

/**
 * With the sale path on, each click first asks for the buyer's path token (as the sale opens, before the
 * flood), `connections` at a time; a refused request leaves no token, and its order is answered for that.
 */
const pathTokens = async (
  target: Readonly<{ url: string; pathPrefix: string; productId: number }>,
  buyers: readonly Buyer[],
  jobs: readonly Job[],
  connections: number,
): Promise<Array<string | undefined>> => {
  const tokens = new Array<string | undefined>(jobs.length);
  const url = `${target.url}${target.pathPrefix}/api/v1/seckill/products/${target.productId}/path`;
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const at = next++;
      const buyer = buyers[(jobs[at] as Job).buyer] as Buyer;
      const answer = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${buyer.token}` },
      });
      const token = field(parseJson(await answer.text()), 'pathToken');
      tokens[at] = typeof token === 'string' ? token : undefined;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(connections, jobs.length)) }, lane));
  return tokens;
};

/**
 * Every buyer clicks `options.clicks` times, in a random order, on `options.connections` connections. With
 * `pathToken`, each click carries a sale path token of its own.
 */
export const flood = async (
  target: Readonly<{ url: string; pathPrefix: string; productId: number; pathToken: boolean }>,
  buyers: readonly Buyer[],
  options: SimulationOptions,
): Promise<Flood> => {
  const jobs = shuffle(
    buyers.flatMap((_, buyer) =>
      Array.from({ length: options.clicks }, () => ({ buyer, key: randomUUID() })),
    ),
  );
  const plainBody = JSON.stringify({ productId: target.productId, quantity: 1 });
  const tokens = target.pathToken ? await pathTokens(target, buyers, jobs, options.connections) : null;
  const bodyOf = (at: number) =>
    tokens ? JSON.stringify({ productId: target.productId, quantity: 1, pathToken: tokens[at] }) : plainBody;
  // dense, not sparse: a click never answered must be seen by flatMap and forEach as a hole of its own
  const outcomes: Array<Outcome | undefined> = Array.from({ length: jobs.length }, () => undefined);
  let cursor = 0;

  const request: CannonRequest = {
    method: 'POST',
    path: `${target.pathPrefix}/api/v1/seckill/orders`,
    // one call per request sent: autocannon sends exactly `amount` requests, so the cursor never runs past the jobs
    setupRequest: (req, context) => {
      const at = cursor++ % jobs.length;
      const job = jobs[at] as Job;
      context.at = at;
      const token = (buyers[job.buyer] as Buyer).token;
      return {
        ...req,
        headers: {
          ...req.headers,
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': job.key,
        },
        body: bodyOf(at),
      };
    },
    // one connection has one request in flight (no pipelining), so the context still holds its job
    onResponse: (status, text, context) => {
      if (context.at !== undefined) outcomes[context.at] = outcomeOf(status, text);
    },
  };

  const timeoutMs = options.floodTimeoutMs ?? 120_000;
  let instance: CannonInstance | undefined;
  let timer: NodeJS.Timeout | undefined;
  const run = new Promise<CannonResult>((resolve, reject) => {
    instance = autocannon(
      {
        url: target.url,
        connections: Math.max(1, Math.min(options.connections, jobs.length)),
        amount: jobs.length,
        timeout: 10,
        sampleInt: 100,
        requests: [request],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // ask autocannon to stop and give back what it has; give up on it if even that does not come
      instance?.stop();
      timer = setTimeout(() => reject(new Error(`the flood did not stop within ${timeoutMs} ms`)), 5_000);
    }, timeoutMs);
  });
  let result: CannonResult;
  try {
    result = await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
  const retries = await retryUnanswered(
    { url: `${target.url}${target.pathPrefix}/api/v1/seckill/orders`, connections: options.connections },
    jobs.map((job, at) => ({ token: (buyers[job.buyer] as Buyer).token, key: job.key, body: bodyOf(at) })),
    outcomes,
  );
  const answers: Record<string, number> = {};
  const accepted: Accepted[] = [];
  outcomes.forEach((outcome, at) => {
    if (!outcome) return;
    bump(answers, outcome.code);
    if (outcome.orderId !== undefined)
      accepted.push({ orderId: outcome.orderId, buyer: (jobs[at] as Job).buyer });
  });
  return { result, answers, accepted, answered: outcomes.filter(Boolean).length, retries };
};

const outcomeOf = (status: number, text: string): Outcome => {
  const parsed = parseJson(text);
  const code = codeOf(status, parsed);
  const orderId = field(parsed, 'orderId');
  return code === 'ACCEPTED' && typeof orderId === 'string' ? { code, orderId } : { code };
};

/** Worth another try with the same key: no answer (a timeout, a cut connection) or a 503. */
const retryable = (outcome: Outcome | undefined): boolean => !outcome || outcome.code === 'UNAVAILABLE';

/**
 * What a buyer's app does after a timeout or a 503: the same order again, with the same Idempotency-Key, so a
 * reservation the lost answer was about is answered again and never made twice. Up to 3 tries a click, a
 * second apart (a 503's Retry-After), `connections` at a time.
 */
const retryUnanswered = async (
  target: Readonly<{ url: string; connections: number }>,
  calls: ReadonlyArray<Readonly<{ token: string; key: string; body: string }>>,
  outcomes: Array<Outcome | undefined>,
): Promise<Readonly<{ sent: number; answered: number }>> => {
  const due = outcomes.flatMap((outcome, at) => (retryable(outcome) ? [at] : []));
  let sent = 0;
  let answered = 0;
  let next = 0;
  const lane = async () => {
    while (next < due.length) {
      const at = due[next++] as number;
      const call = calls[at]!;
      for (let attempt = 0; attempt < 3 && retryable(outcomes[at]); attempt++) {
        if (attempt > 0 || outcomes[at]) await new Promise((resolve) => setTimeout(resolve, 1_000));
        sent++;
        try {
          const answer = await fetch(target.url, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${call.token}`,
              'content-type': 'application/json',
              'idempotency-key': call.key,
            },
            body: call.body,
            signal: AbortSignal.timeout(RETRY_TIMEOUT_MS),
          });
          outcomes[at] = outcomeOf(answer.status, await answer.text());
        } catch {
          // no answer again: the next attempt, if any
        }
      }
      if (outcomes[at]) answered++;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(target.connections, due.length)) }, lane));
  return { sent, answered };
};
