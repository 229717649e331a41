import { describe, expect, it } from '@jest/globals';
import type { OrderProjectionRebuild, OrderReadModel } from '../../src/application/index.js';
import { freshPerTest, instant } from '../support/contract-helpers.js';
import { orderView } from '../support/contract-fixtures.js';

/** The rebuild target, and the live `orders` table it is compared with (empty when made). */
export type RebuildFixture = Readonly<{ target: OrderProjectionRebuild; live: OrderReadModel }>;

export const orderProjectionRebuildContract = (name: string, make: () => Promise<RebuildFixture>) =>
  describe(`OrderProjectionRebuild contract: ${name}`, () => {
    const fixture = freshPerTest(make);
    const target = () => fixture().target;

    it('starts empty at checkpoint 0 after a reset, whatever an earlier rebuild left', async () => {
      await target().reset();
      await target().commit([orderView('a')], 40);
      await target().reset();

      expect(await target().checkpoint()).toBe(0);
      expect((await target().rows(['a'])).size).toBe(0);
    });

    it('keeps the rows and the checkpoint a commit wrote; a later commit replaces a row', async () => {
      await target().reset();
      await target().commit([orderView('a'), orderView('b')], 10);
      const paid = orderView('a', { status: 'PAID', updatedAt: instant(5) });
      await target().commit([paid], 12);

      expect(await target().checkpoint()).toBe(12);
      expect(await target().rows(['a', 'b', 'unknown'])).toEqual(
        new Map([
          ['a', paid],
          ['b', orderView('b')],
        ]),
      );
    });

    it('finds the rebuilt rows equal to the live ones, and names those that differ or are missing', async () => {
      await target().reset();
      await fixture().live.upsertMany([orderView('a'), orderView('b'), orderView('c')]);
      await target().commit([orderView('a'), orderView('b'), orderView('c')], 3);
      expect(await target().compare()).toEqual({ liveRows: 3, rebuiltRows: 3, differing: 0, sample: [] });

      await fixture().live.upsert(orderView('b', { status: 'COMMITTED' }));
      await target().commit([orderView('d')], 4);
      const found = await target().compare();

      expect({ ...found, sample: [...found.sample].sort() }).toEqual({
        liveRows: 3,
        rebuiltRows: 4,
        differing: 2,
        sample: ['b', 'd'],
      });
    });

    it('puts the rebuilt rows in place of the live ones', async () => {
      await target().reset();
      await fixture().live.upsertMany([orderView('a', { status: 'PAID', reason: null }), orderView('stray')]);
      const released = orderView('a', { status: 'RELEASED', reason: 'CANCELLED' });
      await target().commit([released], 2);

      await target().swap();

      expect(await fixture().live.get('a')).toEqual(released);
      expect(await fixture().live.get('stray')).toBeNull();
    });
  });
