import { describe, expect, it } from '@jest/globals';
import {
  type ConsumerLag,
  ConsumerGroups,
  type GroupLag,
  type InboundMessage,
  type MessagePublisher,
  type MessageSubscriber,
  Topics,
} from '../../src/application/index.js';
import { eventually, freshPerTest, type Teardown } from '../support/contract-helpers.js';

/**
 * One broker, seen by the lag reader, a publisher, and workers. `worker()` gives a subscriber to run the
 * service's consumer groups on (a new worker after one is stopped); `createTopics` prepares the service's
 * topics where the broker does not create them on first use.
 */
export type ConsumerLagFixture = Readonly<{
  lag: ConsumerLag;
  publisher: MessagePublisher;
  worker: () => MessageSubscriber;
  createTopics?: (...topics: string[]) => Promise<void>;
}>;

/** A broker's metadata and offsets may take a moment to show a write: lag is read until it says so. */
const SETTLE_MS = 20_000;

const byGroup = (lags: readonly GroupLag[]): GroupLag[] =>
  [...lags].sort((a, b) => a.groupId.localeCompare(b.groupId));

export const consumerLagContract = <F extends ConsumerLagFixture>(
  name: string,
  make: () => Promise<F>,
  teardown?: Teardown<F>,
) =>
  describe(`ConsumerLag contract: ${name}`, () => {
    const broker = freshPerTest(make, teardown);

    const lagOf = async (groupId: string): Promise<number | undefined> =>
      (await broker().lag.lag()).find((g) => g.groupId === groupId)?.lag;
    const lagsAre = (commit: number, compensation: number) =>
      eventually(
        async () =>
          expect(byGroup(await broker().lag.lag())).toEqual([
            { groupId: ConsumerGroups.COMMIT, topic: Topics.ORDERS_RESERVED, lag: commit },
            { groupId: ConsumerGroups.COMPENSATION, topic: Topics.STOCK_COMPENSATION, lag: compensation },
          ]),
        SETTLE_MS,
        50,
      );
    const publish = async (topic: string, count: number, from = 0): Promise<void> => {
      for (let i = from; i < from + count; i += 1)
        await broker().publisher.publish({ topic, key: String(i % 3), payload: `{"n":${i}}`, headers: {} });
    };
    const topicsReady = () => broker().createTopics?.(Topics.ORDERS_RESERVED, Topics.STOCK_COMPENSATION);
    /** Runs the commit group on a worker, recording what it is given; `fail` makes every batch throw. */
    const runCommitGroup = async (fail = false) => {
      const worker = broker().worker();
      const handled: InboundMessage[] = [];
      let deliveries = 0;
      await worker.subscribe({ topic: Topics.ORDERS_RESERVED, groupId: ConsumerGroups.COMMIT }, (batch) => {
        deliveries += 1;
        if (fail) return Promise.reject(new Error('MySQL is down'));
        handled.push(...batch);
        return Promise.resolve();
      });
      return { worker, handled, deliveries: () => deliveries };
    };

    it("lists each of the service's consumer groups with its topic, at 0 before anything is published", async () => {
      // before the topics exist, then once they do
      await lagsAre(0, 0);
      await topicsReady();
      await lagsAre(0, 0);
    });

    it("counts what was published and not yet consumed, each group on its own topic's messages", async () => {
      await topicsReady();
      await publish(Topics.ORDERS_RESERVED, 5);
      await publish(Topics.STOCK_COMPENSATION, 2);
      await lagsAre(5, 2);
    });

    it('falls back to 0 once the group has consumed and acknowledged everything, the other group untouched', async () => {
      await topicsReady();
      await publish(Topics.ORDERS_RESERVED, 5);
      await publish(Topics.STOCK_COMPENSATION, 2);
      await lagsAre(5, 2);
      const { worker, handled } = await runCommitGroup();
      try {
        await lagsAre(0, 2);
        expect(handled).toHaveLength(5);
      } finally {
        await worker.stop();
      }
    });

    it('keeps counting while the group fails its batches: a message handed out is not a message consumed', async () => {
      await topicsReady();
      await publish(Topics.ORDERS_RESERVED, 4);
      await lagsAre(4, 0);
      const { worker, deliveries } = await runCommitGroup(true);
      try {
        // handed out, failed, handed out again: still nothing acknowledged
        await eventually(() => expect(deliveries()).toBeGreaterThanOrEqual(2), SETTLE_MS, 20);
        expect(await lagOf(ConsumerGroups.COMMIT)).toBe(4);
      } finally {
        await worker.stop();
      }
      expect(await lagOf(ConsumerGroups.COMMIT)).toBe(4);
    });

    it('counts what is published while no worker runs the group, from where the group left off', async () => {
      await topicsReady();
      await publish(Topics.ORDERS_RESERVED, 3);
      const first = await runCommitGroup();
      try {
        await lagsAre(0, 0);
      } finally {
        await first.worker.stop();
      }
      // a worker that died is what the lag should show: it grows with nobody consuming
      await publish(Topics.ORDERS_RESERVED, 4, 3);
      await lagsAre(4, 0);
      const next = await runCommitGroup();
      try {
        await lagsAre(0, 0);
        expect(next.handled.map((m) => m.payload)).toEqual(
          expect.arrayContaining(['{"n":3}', '{"n":4}', '{"n":5}', '{"n":6}']),
        );
      } finally {
        await next.worker.stop();
      }
    });
  });
