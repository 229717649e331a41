import { afterEach, describe, expect, it } from '@jest/globals';
import { createRealStack, type RealStack } from '../support/real-stack.js';

describe('/readyz on the real profile', () => {
  let stack: RealStack | null = null;
  afterEach(async () => {
    await stack?.stop();
    stack = null;
  });

  it("says MySQL is ok while every connection of the orders' pool is taken", async () => {
    stack = await createRealStack({ SECKILL_MYSQL_POOL_MIN: '1', SECKILL_MYSQL_POOL_MAX: '2' });
    const service = await stack.start({ http: true, worker: false });
    const { unitOfWork } = service.app.ports;

    // two units of work hold the pool's two connections until told to finish
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let holding = 0;
    let bothHeld!: () => void;
    const held = new Promise<void>((resolve) => {
      bothHeld = resolve;
    });
    const holders = [1, 2].map(() =>
      unitOfWork.run(async (stores) => {
        await stores.inventory.get(1);
        holding += 1;
        if (holding === 2) bothHeld();
        await finished;
      }),
    );
    await held;
    try {
      const answer = await fetch(`${service.url}/readyz`);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ status: 'ready', checks: { mysql: 'ok' } });
    } finally {
      finish();
      await Promise.all(holders);
    }
  });
});
