import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree, reconcileUntilGateAgrees } from '../support/books.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, inParallel } from '../support/e2e-service.js';
import { myOrders, orderWithAnswerDropped, orderWithKey } from '../support/idempotency.js';
import { listeningUrl, startService, type WorkerProcess } from '../support/processes.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';

const STOCK = 300;
const BUYERS = 700;

type Click = Readonly<{
  buyer: string;
  key: string;
  /** 'not sent': the buyer came after the crash; 'no answer': the request was under way when it came */
  status: number | 'no answer' | 'not sent';
  orderId?: string;
}>;

/**
 * The whole service (API and worker, one process, real profile) is killed with SIGKILL in the middle of a sale
 * and started again, as an operator's supervisor would. Buyers send an Idempotency-Key with every order.
 * What the buyers see: those cut off find their orders under "my orders", and a retry with the same key gives
 * them the same order and never a second unit. What the books see: every reservation MySQL holds is decided
 * within seconds of the restart (recovery at start), and once reconciliation has run, the books agree.
 */
describe('drill: the service killed mid-sale and restarted, with buyers retrying by key', () => {
  let stack: RealStack;
  let admin: SeckillService;
  let client: ApiClient;
  const victims: WorkerProcess[] = [];

  /** `seckill all`, answering once its API listens. */
  const startVictim = async (env: Record<string, string> = {}) => {
    const proc = startService('all', { ...stack.env, ...env });
    victims.push(proc);
    const url = await listeningUrl(proc);
    return { proc, url, api: new ApiClient(url, TEST_SECRET) };
  };

  const kill = async (proc: WorkerProcess) => {
    proc.child.kill('SIGKILL');
    if (proc.child.exitCode === null && proc.child.signalCode === null)
      await new Promise((resolve) => proc.child.once('exit', resolve));
  };

  /** Reservations MySQL holds that are not decided yet (the orders read model, in the same transactions). */
  const undecided = async (productId: number): Promise<number> => {
    const rows = await stack.db.orm.em
      .getConnection()
      .execute<Array<{ n: number | string }>>(
        "SELECT COUNT(*) AS n FROM orders WHERE product_id = ? AND status = 'RESERVED'",
        [productId],
      );
    return Number(rows[0]!.n);
  };

  beforeAll(async () => {
    stack = await createRealStack({ SECKILL_RECONCILE_SETTLE_MS: '300' });
    // answers the admin's and the buyers' reads; it has no worker: what is decided, the restarted process decides
    admin = await stack.start({ http: true, worker: false });
    client = new ApiClient(admin.url, TEST_SECRET);
  }, 60_000);

  afterEach(async () => {
    for (const victim of victims.splice(0)) await kill(victim);
  });

  afterAll(async () => {
    await stack.stop();
  });

  it('decides every reservation within 10 s of the restart; cut-off buyers find their orders and retry safely', async () => {
    const productId = await client.listProduct({
      name: 'Crash',
      stock: STOCK,
      perUserLimit: 1,
      maxPerOrder: 1,
    });
    // batches wait a little for company, so that at any moment some buyers are waiting for a commit
    const first = await startVictim({ SECKILL_GROUP_COMMIT_WAIT_MS: '20' });

    let accepted = 0;
    let killed = false;
    const clicks = await inParallel(
      Array.from({ length: BUYERS }, (_, i) => async (): Promise<Click> => {
        const buyer = `crash-${i}`;
        const key = randomUUID();
        if (killed) return { buyer, key, status: 'not sent' };
        try {
          const answer = await orderWithKey(
            first.api,
            await first.api.token(buyer),
            { productId, quantity: 1 },
            key,
          );
          if (answer.status === 202 && ++accepted === 120 && !killed) {
            killed = true;
            first.proc.child.kill('SIGKILL');
          }
          return { buyer, key, status: answer.status, orderId: String(answer.body['orderId']) };
        } catch {
          return { buyer, key, status: 'no answer' };
        }
      }),
      64,
    );
    await kill(first.proc);
    const cutOff = clicks.filter((c) => c.status === 'no answer');
    expect(clicks.filter((c) => c.status === 202).length).toBeGreaterThanOrEqual(120);
    expect(cutOff.length).toBeGreaterThan(0);
    const undecidedAtCrash = await undecided(productId);

    // the restart: from the moment the process is started until MySQL holds no undecided reservation
    const restartedAt = Date.now();
    const second = await startVictim();
    // started: API listening, consumers subscribed (the group waits for the dead member's session to end)
    const startedAfterMs = Date.now() - restartedAt;
    await eventually(async () => expect(await undecided(productId)).toBe(0), 30_000, 50);
    const decidedAfterMs = Date.now() - restartedAt;

    // buyers cut off look in "my orders", then retry with the key they sent
    const outcomes = await inParallel(
      cutOff.map((c) => async () => {
        const token = await second.api.token(c.buyer);
        const found = (await myOrders(second.api, token, `?productId=${productId}`)).orders.map(
          (o) => o['orderId'],
        );
        const retry = await orderWithKey(second.api, token, { productId, quantity: 1 }, c.key);
        const after = (await myOrders(second.api, token, `?productId=${productId}`)).orders;
        return { found, retry, after };
      }),
      32,
    );
    const foundBeforeRetry = outcomes.filter((o) => o.found.length > 0);
    const report = {
      buyers: clicks.length,
      answered202BeforeCrash: clicks.filter((c) => c.status === 202).length,
      cutOff: cutOff.length,
      undecidedAtCrash,
      restartStartedMs: startedAfterMs,
      restartToNoneUndecidedMs: decidedAfterMs,
      cutOffWhoFoundTheirOrder: foundBeforeRetry.length,
      retriesAnswered: Object.fromEntries(
        [...new Set(outcomes.map((o) => o.retry.status))].map((s) => [
          s,
          outcomes.filter((o) => o.retry.status === s).length,
        ]),
      ),
    };
    console.log(`crash-restart drill: ${JSON.stringify(report)}`);

    expect(decidedAfterMs).toBeLessThan(10_000);
    // whoever found an order gets that same order back on the retry, replayed, and holds it alone
    for (const o of foundBeforeRetry) {
      expect(o.retry.status).toBe(202);
      expect(o.retry.body['orderId']).toBe(o.found[0]);
      expect(o.retry.headers.get('idempotent-replayed')).toBe('true');
    }
    // nobody holds two orders, and a retry answered 202 is the order the buyer holds
    for (const o of outcomes) {
      expect(o.after.length).toBeLessThanOrEqual(1);
      if (o.retry.status === 202) expect(o.after.map((a) => a['orderId'])).toEqual([o.retry.body['orderId']]);
      else expect(o.retry.body['code']).toBe('SOLD_OUT');
    }

    await eventually(async () => expect(await undecided(productId)).toBe(0), 30_000, 50);
    await reconcileUntilGateAgrees(client, productId, 30_000);
    const books = await expectBooksAgree(client, [productId]);
    const line = books.products.find((p) => p.productId === productId)!;
    expect(line.sold + (line.mysqlStock ?? 0)).toBe(STOCK);
  }, 180_000);

  it('records on the retry an order whose first try took its unit and died before MySQL', async () => {
    const productId = await client.listProduct({ name: 'Held', stock: 10, perUserLimit: 1, maxPerOrder: 1 });
    // the reservation waits 5 s for its group commit: time to kill the process after the gate, before MySQL
    const first = await startVictim({ SECKILL_GROUP_COMMIT_WAIT_MS: '5000' });
    const token = await client.token('held-buyer');
    const key = randomUUID();
    const lost = orderWithKey(first.api, token, { productId, quantity: 1 }, key).catch(() => 'no answer');
    await eventually(
      async () =>
        expect((await client.request('GET', `/api/v1/products/${productId}`)).body['stockLeft']).toBe(9),
      10_000,
      10,
    );
    await kill(first.proc);
    expect(await lost).toBe('no answer');
    expect((await myOrders(client, token)).orders).toEqual([]);

    const second = await startVictim();
    const retry = await orderWithKey(second.api, token, { productId, quantity: 1 }, key);

    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const mine = await myOrders(second.api, token);
    expect(mine.orders.map((o) => o['orderId'])).toEqual([retry.body['orderId']]);
    expect((await client.request('GET', `/api/v1/products/${productId}`)).body['stockLeft']).toBe(9);
    await eventually(async () => expect(await undecided(productId)).toBe(0), 20_000, 50);
    await reconcileUntilGateAgrees(client, productId, 30_000);
    const books = await expectBooksAgree(client, [productId]);
    expect(books.products.find((p) => p.productId === productId)).toMatchObject({ sold: 1, mysqlStock: 9 });
  }, 120_000);

  it('lets a buyer whose answer was lost before the crash find the order, and get it again by key', async () => {
    const productId = await client.listProduct({
      name: 'Lost answer',
      stock: 10,
      perUserLimit: 1,
      maxPerOrder: 1,
    });
    const first = await startVictim();
    const token = await client.token('lost-answer-buyer');
    const key = randomUUID();

    await orderWithAnswerDropped(first.url, token, { productId, quantity: 1 }, key);
    await kill(first.proc);
    const second = await startVictim();
    const found = await myOrders(second.api, token, `?productId=${productId}`);
    const retry = await orderWithKey(second.api, token, { productId, quantity: 1 }, key);

    expect(found.orders).toHaveLength(1);
    expect(retry.status).toBe(202);
    expect(retry.body['orderId']).toBe(found.orders[0]!['orderId']);
    expect((await client.request('GET', `/api/v1/products/${productId}`)).body['stockLeft']).toBe(9);
  }, 120_000);
});
