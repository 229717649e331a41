import { randomUUID } from 'node:crypto';
import { ApiClient } from './e2e-service.js';

/**
 * A flash sale driven through the balancer of a scaled-out deployment, with a fault injected at a random moment
 * in its middle. Buyers arrive at a steady pace over the sale; each clicks (a third of them twice at once),
 * follows an accepted order until the pipeline decides it, then pays for it, cancels it or leaves it, and
 * some come back for a second unit. Every answer is kept with its time, so the report can tell what the buyers
 * met while a node was down.
 */

export type Outcome = number | 'no answer';
export type DrillAnswer = Readonly<{
  at: number;
  what: 'order' | 'read' | 'pay' | 'cancel';
  status: Outcome;
  /** the refusal's code (SOLD_OUT, …) */
  code?: string;
  /** how long the buyer waited for it */
  ms: number;
}>;
export type DrillOrder = {
  readonly orderId: string;
  readonly buyer: string;
  readonly productId: number;
  readonly acceptedAt: number;
  /** when the buyer first saw it decided (COMMITTED or RELEASED), null if never within the drill */
  decidedAt: number | null;
};

export type DrillOptions = Readonly<{
  url: string;
  secret: string;
  productIds: readonly number[];
  buyers: number;
  /** buyers arrive over this long */
  saleMs: number;
  /** the fault, injected `faultAtMs` after the first buyer */
  faultAtMs: number;
  fault: () => Promise<void>;
  /** called once the fault has been injected (the screenshot of the dashboard, say) */
  duringFault?: () => Promise<void>;
  seed: number;
}>;

export type DrillRun = Readonly<{
  startedAt: number;
  faultAt: number;
  answers: DrillAnswer[];
  orders: DrillOrder[];
  /** order clicks sent again with their Idempotency-Key after no answer or a 5xx */
  orderRetries: number;
}>;

/** mulberry32: a small seeded generator, so that a failed drill can be run again as it was. */
export const seeded = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const DECIDED = new Set(['COMMITTED', 'PAID', 'RELEASED']);

class Buyers {
  readonly answers: DrillAnswer[] = [];
  readonly orders: DrillOrder[] = [];
  retries = 0;
  private readonly api: ApiClient;
  private readonly tokens = new Map<string, Promise<string>>();

  constructor(
    private readonly options: DrillOptions,
    private readonly random: () => number,
  ) {
    this.api = new ApiClient(options.url, options.secret);
  }

  private token(buyer: string): Promise<string> {
    let token = this.tokens.get(buyer);
    if (!token) {
      token = this.api.token(buyer);
      this.tokens.set(buyer, token);
    }
    return token;
  }

  private async call(
    what: DrillAnswer['what'],
    buyer: string,
    method: string,
    path: string,
    send: Readonly<{ json?: unknown; headers?: Record<string, string> }> = {},
  ): Promise<{ status: Outcome; body: Record<string, unknown> }> {
    const { json, headers } = send;
    let status: Outcome = 'no answer';
    let body: Record<string, unknown> = {};
    const sent = Date.now();
    try {
      const answer = await this.api.request(method, path, {
        token: await this.token(buyer),
        ...(json === undefined ? {} : { json }),
        ...(headers ? { headers } : {}),
      });
      ({ status, body } = answer);
    } catch (error) {
      // the connection was cut: the buyer saw no answer (the report names how: the socket's error code)
      const cause = (error as { cause?: { code?: unknown } }).cause?.code;
      body = { code: `no answer (${typeof cause === 'string' ? cause : 'unknown'})` };
    }
    const code = typeof body['code'] === 'string' ? body['code'] : undefined;
    this.answers.push({ at: Date.now(), what, status, ms: Date.now() - sent, ...(code ? { code } : {}) });
    return { status, body };
  }

  /**
   * One click, with an Idempotency-Key of its own: cut off or answered 5xx, the buyer's app sends it again with
   * the key, half a second later, up to 3 times (every try is in the answers).
   */
  private async click(buyer: string, productId: number): Promise<DrillOrder | null> {
    const key = randomUUID();
    let answer = await this.order(buyer, productId, key);
    for (let retry = 0; retry < 3 && (answer.status === 'no answer' || answer.status >= 500); retry++) {
      this.retries += 1;
      await sleep(500);
      answer = await this.order(buyer, productId, key);
    }
    const { status, body } = answer;
    if (status !== 202) return null;
    const order = {
      orderId: String(body['orderId']),
      buyer,
      productId,
      acceptedAt: Date.now(),
      decidedAt: null,
    };
    this.orders.push(order);
    return order;
  }

  private order(buyer: string, productId: number, key: string) {
    return this.call('order', buyer, 'POST', '/api/v1/seckill/orders', {
      json: { productId, quantity: 1 },
      headers: { 'idempotency-key': key },
    });
  }

  /** Reads the order until the pipeline has decided it (a read the fault cuts is tried again). */
  private async follow(order: DrillOrder, deadline: number): Promise<string | null> {
    while (Date.now() < deadline) {
      const { status, body } = await this.call('read', order.buyer, 'GET', `/api/v1/orders/${order.orderId}`);
      if (status === 200 && DECIDED.has(String(body['status']))) {
        order.decidedAt = Date.now();
        return String(body['status']);
      }
      await sleep(250);
    }
    return null;
  }

  private async afterCommit(order: DrillOrder): Promise<void> {
    const choice = this.random();
    if (choice < 0.5) await this.call('pay', order.buyer, 'POST', `/api/v1/orders/${order.orderId}/payment`);
    else if (choice < 0.7)
      await this.call('cancel', order.buyer, 'POST', `/api/v1/orders/${order.orderId}/cancel`);
  }

  async session(index: number, deadline: number): Promise<void> {
    const buyer = `scale-${index}`;
    const { productIds } = this.options;
    const productId = productIds[index % productIds.length]!;
    const doubleClick = this.random() < 0.35;
    const comeBack = this.random() < 0.4;
    const clicks = await Promise.all((doubleClick ? [0, 1] : [0]).map(() => this.click(buyer, productId)));
    for (const order of clicks) {
      if (!order) continue;
      if ((await this.follow(order, deadline)) === 'COMMITTED') await this.afterCommit(order);
    }
    if (comeBack) {
      const again = await this.click(buyer, productId);
      if (again) await this.follow(again, deadline);
    }
  }
}

export const runDrill = async (options: DrillOptions): Promise<DrillRun> => {
  const random = seeded(options.seed);
  const buyers = new Buyers(options, random);
  const startedAt = Date.now();
  // decisions are awaited well past the sale: a node down holds some of them up for seconds
  const deadline = startedAt + options.saleMs + 60_000;
  let faultAt = 0;
  const fault = (async () => {
    await sleep(options.faultAtMs);
    faultAt = Date.now();
    await options.fault();
    await options.duringFault?.();
  })();
  const gap = options.saleMs / options.buyers;
  const sessions: Array<Promise<void>> = [];
  for (let i = 0; i < options.buyers; i += 1) {
    const due = startedAt + i * gap;
    if (due > Date.now()) await sleep(due - Date.now());
    sessions.push(buyers.session(i, deadline));
  }
  await Promise.all([fault, ...sessions]);
  return {
    startedAt,
    faultAt,
    answers: buyers.answers,
    orders: buyers.orders,
    orderRetries: buyers.retries,
  };
};

const failed = (a: DrillAnswer) => a.status === 'no answer' || a.status >= 500;
/** a request the balancer may send again to another API: a read, or an order with its Idempotency-Key */
const retriable = (a: DrillAnswer) => a.what === 'order' || a.what === 'read';

const slowestByRequest = (answers: readonly DrillAnswer[]): Record<string, number> => {
  const slowest: Record<string, number> = {};
  for (const a of answers) slowest[a.what] = Math.max(slowest[a.what] ?? 0, a.ms);
  return slowest;
};

export type DrillReport = Readonly<{
  fault: string;
  seed: number;
  faultAfterMs: number;
  requests: number;
  /** the order requests' answers: 202, or the refusal's code, or the status */
  orderAnswers: Record<string, number>;
  ordersAccepted: number;
  acceptedBeforeFault: number;
  acceptedAfterFault: number;
  /** order outcomes from MySQL: COMMITTED, PAID, RELEASED:<reason> */
  outcomes: Record<string, number>;
  /** answers 5xx or none at all, from the fault on */
  failedAfterFault: number;
  failedByStatus: Record<string, number>;
  /**
   * of those, the answers to reads and keyed orders, which the balancer sends again to another API when theirs
   * dies (the rest are payments and cancellations, which carry no key)
   */
  keyedFailedAfterFault: number;
  /** order clicks sent again with their Idempotency-Key (after no answer or a 5xx) */
  orderRetries: number;
  /** the longest a buyer waited for an answer from the fault on, by request */
  slowestAnswerAfterFaultMs: Record<string, number>;
  /**
   * What reconciliation corrected: units the gate held beyond MySQL's books (re-opened) and short of them
   * (given back), and released orders whose restore the gate had lost
   */
  gateDrift: Readonly<{ reopened: number; givenBack: number; restoresLost: number }>;
  /** from the fault to the last answer 5xx or none (0: the buyers met no failure) */
  answersRecoveredMs: number;
  /** the longest wait, among orders accepted after the fault, from 202 to the buyer seeing it decided */
  slowestDecisionAfterFaultMs: number;
  /** the MySQL writer killed: until a write went through again, and until the node had rejoined (IST) */
  mysqlWriter: Readonly<{ writesResumedMs: number; rejoinedMs: number }> | null;
}>;

export const drillReport = (
  fault: string,
  seed: number,
  run: DrillRun,
  outcomes: Record<string, number>,
  measured: Readonly<{ gateDrift: DrillReport['gateDrift']; mysqlWriter: DrillReport['mysqlWriter'] }>,
): DrillReport => {
  const { gateDrift, mysqlWriter } = measured;
  const orderAnswers: Record<string, number> = {};
  for (const a of run.answers.filter((x) => x.what === 'order')) {
    const key = a.code ?? String(a.status);
    orderAnswers[key] = (orderAnswers[key] ?? 0) + 1;
  }
  const afterFault = run.answers.filter((a) => a.at >= run.faultAt);
  const failures = afterFault.filter(failed);
  const failedByStatus: Record<string, number> = {};
  for (const a of failures) failedByStatus[String(a.status)] = (failedByStatus[String(a.status)] ?? 0) + 1;
  const lastFailure = Math.max(run.faultAt, ...failures.map((a) => a.at));
  const lateOrders = run.orders.filter((o) => o.acceptedAt >= run.faultAt);
  return {
    fault,
    seed,
    faultAfterMs: run.faultAt - run.startedAt,
    requests: run.answers.length,
    orderAnswers,
    ordersAccepted: run.orders.length,
    acceptedBeforeFault: run.orders.length - lateOrders.length,
    acceptedAfterFault: lateOrders.length,
    outcomes,
    failedAfterFault: failures.length,
    failedByStatus,
    keyedFailedAfterFault: failures.filter(retriable).length,
    orderRetries: run.orderRetries,
    slowestAnswerAfterFaultMs: slowestByRequest(afterFault),
    gateDrift,
    answersRecoveredMs: lastFailure - run.faultAt,
    slowestDecisionAfterFaultMs: Math.max(
      0,
      ...lateOrders.map((o) => (o.decidedAt ?? Number.POSITIVE_INFINITY) - o.acceptedAt),
    ),
    mysqlWriter,
  };
};

/** The report as the lines the test prints (and docs/consistency.md records). */
export const renderReport = (r: DrillReport): string =>
  [
    `scale drill: ${r.fault} (seed ${r.seed}), at ${(r.faultAfterMs / 1000).toFixed(1)} s into the sale`,
    `  requests        ${r.requests}; orders answered ${Object.entries(r.orderAnswers)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  orders accepted ${r.ordersAccepted} (${r.acceptedBeforeFault} before the fault, ${r.acceptedAfterFault} after)`,
    `  outcomes        ${Object.entries(r.outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  5xx or no answer from the fault on: ${r.failedAfterFault} ${JSON.stringify(r.failedByStatus)}, ${r.keyedFailedAfterFault} of them to reads and keyed orders; ${r.orderRetries} order click(s) sent again by the buyer with their Idempotency-Key`,
    `  slowest answer from the fault on (ms): ${Object.entries(r.slowestAnswerAfterFaultMs)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  reconciliation  ${r.gateDrift.reopened} unit(s) re-opened in the gate taken back, ${r.gateDrift.givenBack} given back, ${r.gateDrift.restoresLost} lost restore(s) given back`,
    `  answers recovered ${(r.answersRecoveredMs / 1000).toFixed(1)} s after the fault; slowest decision of an order accepted after it ${(r.slowestDecisionAfterFaultMs / 1000).toFixed(1)} s`,
    ...(r.mysqlWriter
      ? [
          `  MySQL writer    writes went through again ${(r.mysqlWriter.writesResumedMs / 1000).toFixed(1)} s after the kill; the node had rejoined (IST) after ${(r.mysqlWriter.rejoinedMs / 1000).toFixed(1)} s`,
        ]
      : []),
  ].join('\n');
