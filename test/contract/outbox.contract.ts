import { describe, expect, it } from '@jest/globals';
import { type Outbox, type OutboxMessage, OutboxStatus } from '../../src/application/index.js';
import { freshPerTest, instant, type Teardown } from '../support/contract-helpers.js';
import { outboxMessage } from '../support/contract-fixtures.js';

const ids = (rows: readonly OutboxMessage[]): string[] => rows.map((r) => r.messageId);

export const outboxContract = (name: string, make: () => Promise<Outbox>, teardown?: Teardown<Outbox>) =>
  describe(`Outbox contract: ${name}`, () => {
    const outbox = freshPerTest(make, teardown);

    const statusOf = async (messageId: string): Promise<OutboxStatus | undefined> =>
      (await outbox().get(messageId))?.status;

    it('adds a pending row with no attempts and reads it back', async () => {
      const message = outboxMessage('m1');
      await outbox().add(message, instant(1.5));
      expect(await outbox().get('m1')).toEqual({
        ...message,
        status: OutboxStatus.PENDING,
        attempts: 0,
        lastError: null,
        createdAt: instant(1.5),
        updatedAt: instant(1.5),
      });
      expect(await outbox().get('m2')).toBeNull();
    });

    it('rejects a duplicate messageId and keeps the first row', async () => {
      await outbox().add(outboxMessage('m1'), instant(0));
      await expect(outbox().add(outboxMessage('m1', { payload: 'second' }), instant(1))).rejects.toThrow();
      expect(await outbox().get('m1')).toMatchObject({
        payload: outboxMessage('m1').payload,
        createdAt: instant(0),
      });
      expect((await outbox().countByStatus())[OutboxStatus.PENDING]).toBe(1);
    });

    it('adds several rows at once, and on a duplicate id writes none of them', async () => {
      await outbox().addMany([outboxMessage('m1'), outboxMessage('m2')], instant(1));
      expect(await statusOf('m1')).toBe(OutboxStatus.PENDING);
      expect(await outbox().get('m2')).toMatchObject({ attempts: 0, createdAt: instant(1) });
      await expect(
        outbox().addMany([outboxMessage('m3'), outboxMessage('m2', { payload: 'again' })], instant(2)),
      ).rejects.toThrow(/duplicate outbox message id/);
      expect(await outbox().get('m3')).toBeNull();
      expect(await outbox().get('m2')).toMatchObject({ payload: outboxMessage('m2').payload });
      await outbox().addMany([], instant(3));
      expect((await outbox().countByStatus())[OutboxStatus.PENDING]).toBe(2);
    });

    it('marks several rows consumed at once, leaving the others', async () => {
      for (const id of ['m1', 'm2', 'm3']) await outbox().add(outboxMessage(id), instant(0));
      await outbox().markSent('m2', instant(1));
      await outbox().markConsumedMany(['m1', 'm2', 'unknown'], instant(2));
      expect(await outbox().get('m1')).toMatchObject({
        status: OutboxStatus.CONSUMED,
        updatedAt: instant(2),
      });
      expect(await statusOf('m2')).toBe(OutboxStatus.CONSUMED);
      expect(await statusOf('m3')).toBe(OutboxStatus.PENDING);
      await outbox().markConsumedMany([], instant(3));
    });

    it('marks a row sent', async () => {
      await outbox().add(outboxMessage('m1'), instant(0));
      await outbox().markSent('m1', instant(2));
      expect(await outbox().get('m1')).toMatchObject({ status: OutboxStatus.SENT, updatedAt: instant(2) });
    });

    it('marks a row consumed, and never moves a consumed row back', async () => {
      await outbox().add(outboxMessage('m1'), instant(0));
      await outbox().markSent('m1', instant(1));
      await outbox().markConsumed('m1', instant(2));
      expect(await statusOf('m1')).toBe(OutboxStatus.CONSUMED);
      await outbox().markSent('m1', instant(3));
      expect(await statusOf('m1')).toBe(OutboxStatus.CONSUMED);
      await outbox().markFailed('m1', 'late failure report', instant(4), 5);
      expect(await statusOf('m1')).toBe(OutboxStatus.CONSUMED);
    });

    it('marks a row consumed before it was ever marked sent', async () => {
      await outbox().add(outboxMessage('m1'), instant(0));
      await outbox().markConsumed('m1', instant(1));
      expect(await statusOf('m1')).toBe(OutboxStatus.CONSUMED);
    });

    it('counts failed attempts and answers FAILED, then DEAD at maxAttempts', async () => {
      await outbox().add(outboxMessage('m1'), instant(0));
      expect(await outbox().markFailed('m1', 'broker down', instant(1), 3)).toBe(OutboxStatus.FAILED);
      expect(await outbox().get('m1')).toMatchObject({
        status: OutboxStatus.FAILED,
        attempts: 1,
        lastError: 'broker down',
        updatedAt: instant(1),
      });
      expect(await outbox().markFailed('m1', 'timeout', instant(2), 3)).toBe(OutboxStatus.FAILED);
      expect((await outbox().get('m1'))?.attempts).toBe(2);
      expect(await outbox().markFailed('m1', 'still down', instant(3), 3)).toBe(OutboxStatus.DEAD);
      expect(await outbox().get('m1')).toMatchObject({
        status: OutboxStatus.DEAD,
        attempts: 3,
        lastError: 'still down',
      });
    });

    describe('due', () => {
      /** Rows in every state, touched at known times; due ones are A, B and C, oldest first. */
      const scene = async () => {
        await outbox().add(outboxMessage('A-failed-long-ago'), instant(0));
        await outbox().markFailed('A-failed-long-ago', 'broker down', instant(1), 5);
        await outbox().add(outboxMessage('B-pending'), instant(2));
        await outbox().add(outboxMessage('C-sent-never-consumed'), instant(3));
        await outbox().markSent('C-sent-never-consumed', instant(4));
        await outbox().add(outboxMessage('consumed'), instant(1));
        await outbox().markConsumed('consumed', instant(2));
        await outbox().add(outboxMessage('dead'), instant(1));
        await outbox().markFailed('dead', 'gave up', instant(2), 1);
        await outbox().add(outboxMessage('sent-recently'), instant(5));
        await outbox().markSent('sent-recently', instant(9));
        await outbox().add(outboxMessage('failed-recently'), instant(3));
        await outbox().markFailed('failed-recently', 'broker down', instant(12), 5);
        await outbox().add(outboxMessage('pending-new'), instant(11));
      };

      it('returns pending and failed rows due for a retry and stale sent rows, oldest first', async () => {
        await scene();
        const due = await outbox().due({ retryBefore: instant(10), staleSentBefore: instant(8), limit: 100 });
        expect(ids(due)).toEqual(['A-failed-long-ago', 'B-pending', 'C-sent-never-consumed']);
        expect(due[0]).toMatchObject({ status: OutboxStatus.FAILED, attempts: 1, lastError: 'broker down' });
        expect(due[1]).toEqual({
          ...outboxMessage('B-pending'),
          status: OutboxStatus.PENDING,
          attempts: 0,
          lastError: null,
          createdAt: instant(2),
          updatedAt: instant(2),
        });
      });

      it('never returns consumed or dead rows, however old', async () => {
        await scene();
        const due = await outbox().due({
          retryBefore: instant(1_000),
          staleSentBefore: instant(1_000),
          limit: 100,
        });
        expect(ids(due).sort()).toEqual(
          [
            'A-failed-long-ago',
            'B-pending',
            'C-sent-never-consumed',
            'failed-recently',
            'pending-new',
            'sent-recently',
          ].sort(),
        );
      });

      it('returns at most limit rows, the oldest', async () => {
        await scene();
        const due = await outbox().due({ retryBefore: instant(10), staleSentBefore: instant(8), limit: 2 });
        expect(ids(due)).toEqual(['A-failed-long-ago', 'B-pending']);
      });
    });

    it('counts rows by status, zeros included', async () => {
      expect(await outbox().countByStatus()).toEqual({
        [OutboxStatus.PENDING]: 0,
        [OutboxStatus.SENT]: 0,
        [OutboxStatus.CONSUMED]: 0,
        [OutboxStatus.FAILED]: 0,
        [OutboxStatus.DEAD]: 0,
      });
      for (const id of ['p1', 'p2', 's', 'c', 'f', 'd']) await outbox().add(outboxMessage(id), instant(0));
      await outbox().markSent('s', instant(1));
      await outbox().markConsumed('c', instant(1));
      await outbox().markFailed('f', 'x', instant(1), 3);
      await outbox().markFailed('d', 'x', instant(1), 1);
      expect(await outbox().countByStatus()).toEqual({
        [OutboxStatus.PENDING]: 2,
        [OutboxStatus.SENT]: 1,
        [OutboxStatus.CONSUMED]: 1,
        [OutboxStatus.FAILED]: 1,
        [OutboxStatus.DEAD]: 1,
      });
    });

    it('counts the rows not consumed yet by status, zeros included, and leaves consumed rows out', async () => {
      const zero = {
        [OutboxStatus.PENDING]: 0,
        [OutboxStatus.SENT]: 0,
        [OutboxStatus.FAILED]: 0,
        [OutboxStatus.DEAD]: 0,
      };
      expect(await outbox().countOpen()).toEqual(zero);
      for (const id of ['p1', 'p2', 's', 'c1', 'c2', 'f', 'd'])
        await outbox().add(outboxMessage(id), instant(0));
      await outbox().markSent('s', instant(1));
      await outbox().markConsumedMany(['c1', 'c2'], instant(1));
      await outbox().markFailed('f', 'x', instant(1), 3);
      await outbox().markFailed('d', 'x', instant(1), 1);
      expect(await outbox().countOpen()).toEqual({
        [OutboxStatus.PENDING]: 2,
        [OutboxStatus.SENT]: 1,
        [OutboxStatus.FAILED]: 1,
        [OutboxStatus.DEAD]: 1,
      });
      await outbox().markConsumedMany(['p1', 'p2', 's', 'f'], instant(2));
      expect(await outbox().countOpen()).toEqual({ ...zero, [OutboxStatus.DEAD]: 1 });
    });
  });
