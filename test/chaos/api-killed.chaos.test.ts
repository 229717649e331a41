import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree, reconcileUntilGateAgrees } from '../support/books.js';
import { ApiClient, inParallel } from '../support/e2e-service.js';
import { listeningUrl, startService, type WorkerProcess } from '../support/processes.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

const STOCK = 400;
const BUYERS = 900;

type Click = Readonly<{ buyer: string; status: number | 'no answer'; orderId?: string }>;

/**
 * The API process dies (SIGKILL) while buyers are being answered: some reservations wait for their group
 * commit, some are in a transaction that never commits, some have committed with the answer not yet sent.
 * Whatever a buyer was told 202 must be in MySQL and decided; nothing is sold twice; and once reconciliation
 * has given back the units the gate held for reservations that were never recorded, the books agree.
 */
describe('drill: the API killed with SIGKILL in the middle of its group commits', () => {
  let stack: RealStack;
  let admin: SeckillService;
  let client: ApiClient;
  let victim: WorkerProcess | null = null;

  beforeAll(async () => {
    stack = await createRealStack({
      SECKILL_RECONCILE_SETTLE_MS: '300',
      // rows the dead API committed but never published are the relay's to send: soon, in this drill
      SECKILL_OUTBOX_RELAY_MS: '500',
      SECKILL_OUTBOX_PENDING_GRACE_MS: '1000',
    });
    // this process's service commits the reservations and answers the admin and the buyers' reads
    admin = await stack.start({ http: true, worker: true });
    client = new ApiClient(admin.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    victim?.child.kill('SIGKILL');
    await stack.stop();
  });

  it('keeps every order answered 202, and the books agree once reconciliation has run', async () => {
    const productId = await client.listProduct({
      name: 'Killed',
      stock: STOCK,
      perUserLimit: 1,
      maxPerOrder: 1,
    });
    // batches wait a little for company, so that at any moment some buyers are waiting for a commit
    victim = startService('serve', { ...stack.env, SECKILL_GROUP_COMMIT_WAIT_MS: '20' });
    const proc = victim;
    const url = await listeningUrl(proc);
    const buyers = new ApiClient(url, TEST_SECRET);

    let accepted = 0;
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      proc.child.kill('SIGKILL');
    };
    const clicks = await inParallel(
      Array.from({ length: BUYERS }, (_, i) => async (): Promise<Click> => {
        const buyer = `killed-${i}`;
        if (killed) return { buyer, status: 'no answer' };
        try {
          const answer = await buyers.request('POST', '/api/v1/seckill/orders', {
            token: await buyers.token(buyer),
            json: { productId, quantity: 1 },
          });
          if (answer.status === 202 && ++accepted === 150) kill();
          return { buyer, status: answer.status, orderId: String(answer.body['orderId']) };
        } catch {
          return { buyer, status: 'no answer' };
        }
      }),
      64,
    );
    if (proc.child.exitCode === null && proc.child.signalCode === null)
      await new Promise((resolve) => proc.child.once('exit', resolve));

    const answered = clicks.filter((c) => c.status === 202);
    // the drill only means something if the kill cut buyers off while their orders were under way
    expect(answered.length).toBeGreaterThanOrEqual(150);
    expect(clicks.filter((c) => c.status === 'no answer').length).toBeGreaterThan(0);
    expect(clicks.filter((c) => c.status !== 202 && c.status !== 'no answer')).toEqual([]);

    await drained(admin, 120_000);
    // every buyer told 202 holds a committed order
    const orders = await inParallel(
      answered.map(
        (c) => async () =>
          (await client.request('GET', `/api/v1/orders/${c.orderId}`, { token: await client.token(c.buyer) }))
            .body,
      ),
      32,
    );
    expect(orders.map((o) => o['status'])).toEqual(answered.map(() => 'COMMITTED'));

    // units the gate held for reservations that died before their commit are given back by reconciliation
    await reconcileUntilGateAgrees(client, productId);
    const report = await expectBooksAgree(client, [productId]);
    const line = report.products.find((p) => p.productId === productId)!;
    expect(line.sold).toBeGreaterThanOrEqual(answered.length);
    expect(line.sold + (line.mysqlStock ?? 0)).toBe(STOCK);
  }, 180_000);
});
