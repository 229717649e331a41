import { describe, expect, it } from '@jest/globals';
import { CallerBlocks } from '../../../src/application/place-order/caller-blocks.js';
import { SoldOutBuyers } from '../../../src/application/place-order/sold-out-buyers.js';
import { eventually, silentLogger } from '../../support/contract-helpers.js';

describe('CallerBlocks: callers over a budget, blocked in process', () => {
  it('blocks a caller until its window ends, then lets it ask again', () => {
    let now = 1_000;
    const blocks = new CallerBlocks(10, () => now);
    blocks.block('1|buyer|alice', 500);

    expect(blocks.blockedFor('1|buyer|alice')).toBe(500);
    expect(blocks.blockedFor('1|buyer|bob')).toBe(0);
    now += 499;
    expect(blocks.blockedFor('1|buyer|alice')).toBe(1);
    now += 1;
    expect(blocks.blockedFor('1|buyer|alice')).toBe(0);
    expect(blocks.size).toBe(0);
  });

  it('holds at most its bound however many callers a bot invents, ended blocks and then the oldest going first', () => {
    let now = 0;
    const blocks = new CallerBlocks(100, () => now);
    for (let i = 0; i < 100; i += 1) blocks.block(`1|address|10.0.0.${i}`, i < 50 ? 10 : 60_000);
    now = 20;

    for (let i = 0; i < 10_000; i += 1) blocks.block(`1|buyer|bot-${i}`, 60_000);

    expect(blocks.size).toBeLessThanOrEqual(100);
    expect(blocks.blockedFor('1|buyer|bot-9999')).toBe(60_000);
  });
});

describe('SoldOutBuyers: who reserved a sold-out product', () => {
  it('keeps the lists of a bounded number of products', async () => {
    const asked: number[] = [];
    const buyers = new SoldOutBuyers(
      {
        reservedBy: (productId) => {
          asked.push(productId);
          return Promise.resolve(new Set([`buyer-of-${productId}`]));
        },
      },
      silentLogger,
    );
    for (let productId = 1; productId <= 100; productId += 1) buyers.refresh(productId);
    await eventually(() => expect(asked).toHaveLength(100));
    await eventually(() => expect(buyers.mayHold(100, 'someone-else')).toBe(false));

    // the first products' lists were dropped: any buyer may go on to the gate there
    expect(buyers.mayHold(1, 'someone-else')).toBe(true);
    expect(buyers.mayHold(100, 'buyer-of-100')).toBe(true);
  });

  it('lets every keyed request on to the gate for a product with more reservations than it keeps', async () => {
    const buyers = new SoldOutBuyers(
      { reservedBy: (productId) => Promise.resolve(productId === 7 ? null : new Set(['alice'])) },
      silentLogger,
      10,
    );
    buyers.refresh(7);
    buyers.refresh(8);
    await eventually(() => expect(buyers.mayHold(8, 'stranger')).toBe(false));

    expect(buyers.mayHold(7, 'stranger')).toBe(true);
  });
});
