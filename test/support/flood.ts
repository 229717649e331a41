import { randomUUID } from 'node:crypto';
import type { ApiClient, Answer } from './e2e-service.js';
import { inParallel } from './e2e-service.js';

export type FloodOptions = Readonly<{
  productId: number;
  buyers: number;
  concurrency: number;
  seed: number;
  /** buyers are `<prefix>-<i>` (default `buyer`) */
  buyerPrefix?: string;
  /** every n-th buyer clicks this many times more (double clicks and retries) */
  repeatEvery?: number;
  repeats?: number;
  /** runs once, after this many answers: lets a test break something in the middle of the flood */
  midway?: Readonly<{ after: number; action: () => void | Promise<void> }>;
}>;

export type FloodResult = Readonly<{
  answers: ReadonlyArray<{ buyer: number; answer: Answer }>;
  accepted: ReadonlyArray<{ buyer: number; orderId: string }>;
  codes: ReadonlyMap<string, number>;
  /** answers other than 202 and the expected rejections, after the retries */
  unexpected: readonly string[];
  /** 503s and broken connections sent again with their Idempotency-Key, as a buyer's app does */
  retried: number;
  /** reads back every accepted order */
  decide: () => Promise<Decided>;
}>;

/**
 * What became of the accepted orders: units sold (committed or paid), orders still reserved, the most units
 * one buyer holds, and the accepted orders released since, counted by reason (a buyer told "accepted" whose
 * order was then released shows here, with why).
 */
export type Decided = Readonly<{
  sold: number;
  undecided: number;
  maxUnitsPerBuyer: number;
  released: Readonly<Record<string, number>>;
}>;

const EXPECTED = new Set(['ACCEPTED', 'SOLD_OUT', 'LIMIT_EXCEEDED', 'DUPLICATE_REQUEST']);

const shuffled = <T>(items: T[], seed: number): T[] => {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
};

const RETRIES = 3;

/**
 * Buyers race for one product over HTTP, some clicking more than once; every answer is kept. Each click
 * carries an Idempotency-Key of its own, and a click answered 503 (or cut off) is sent again with it, a
 * second later, up to 3 times, as a buyer's app retries: the answer kept is the last one.
 */
export const runFlood = async (api: ApiClient, options: FloodOptions): Promise<FloodResult> => {
  const tokens = await Promise.all(
    Array.from({ length: options.buyers }, (_, i) => api.token(`${options.buyerPrefix ?? 'buyer'}-${i}`)),
  );
  const clicks: number[] = [];
  tokens.forEach((_, buyer) => {
    const extra = buyer % (options.repeatEvery ?? 3) === 0 ? (options.repeats ?? 3) : 0;
    for (let c = 0; c <= extra; c++) clicks.push(buyer);
  });
  let answered = 0;
  let retried = 0;
  const click = async (buyer: number): Promise<Answer> => {
    const send = () =>
      api.request('POST', '/api/v1/seckill/orders', {
        token: tokens[buyer]!,
        json: { productId: options.productId, quantity: 1 },
        headers: { 'idempotency-key': key },
      });
    const key = randomUUID();
    for (let attempt = 0; ; attempt++) {
      const last = attempt === RETRIES;
      const answer = await send().catch((error: unknown) => {
        if (last) throw error;
        return null;
      });
      if (answer && (answer.status !== 503 || last)) return answer;
      retried += 1;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  const answers = await inParallel(
    shuffled(clicks, options.seed).map((buyer) => async () => {
      const answer = await click(buyer);
      answered += 1;
      if (options.midway && answered === options.midway.after) await options.midway.action();
      return { buyer, answer };
    }),
    options.concurrency,
  );
  const codes = new Map<string, number>();
  const unexpected: string[] = [];
  for (const { answer } of answers) {
    const code = answer.status === 202 ? 'ACCEPTED' : String(answer.body['code']);
    codes.set(code, (codes.get(code) ?? 0) + 1);
    if (!EXPECTED.has(code)) unexpected.push(`${answer.status} ${code}`);
  }
  const accepted = answers
    .filter(({ answer }) => answer.status === 202)
    .map(({ buyer, answer }) => ({ buyer, orderId: String(answer.body['orderId']) }));
  /** an order read as a buyer's app reads it: a 503 is read again a second later, anything but 200 is an error */
  const readOrder = async (buyer: number, orderId: string): Promise<Record<string, unknown>> => {
    for (let attempt = 0; ; attempt++) {
      const answer = await api.request('GET', `/api/v1/orders/${orderId}`, { token: tokens[buyer]! });
      if (answer.status === 200) return answer.body;
      if (answer.status !== 503 || attempt === RETRIES)
        throw new Error(`order ${orderId} read back ${answer.status}: ${JSON.stringify(answer.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  const decide = async (): Promise<Decided> => {
    const orders = await inParallel(
      accepted.map(({ buyer, orderId }) => async () => ({ buyer, order: await readOrder(buyer, orderId) })),
      32,
    );
    const units = new Map<number, number>();
    const released: Record<string, number> = {};
    let sold = 0;
    let undecided = 0;
    for (const { buyer, order } of orders) {
      const status = String(order['status']);
      if (status === 'RESERVED') undecided += 1;
      if (status === 'RELEASED') {
        const reason = String(order['reason']);
        released[reason] = (released[reason] ?? 0) + 1;
      }
      if (status !== 'COMMITTED' && status !== 'PAID') continue;
      const quantity = Number(order['quantity']);
      sold += quantity;
      units.set(buyer, (units.get(buyer) ?? 0) + quantity);
    }
    return { sold, undecided, maxUnitsPerBuyer: Math.max(0, ...units.values()), released };
  };
  return { answers, accepted, codes, unexpected, retried, decide };
};
