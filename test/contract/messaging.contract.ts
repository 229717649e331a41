import { describe, expect, it } from '@jest/globals';
import type {
  InboundMessage,
  MessagePublisher,
  MessageSubscriber,
  OutboundMessage,
} from '../../src/application/index.js';
import { eventually, freshPerTest, uniqueName, type Teardown } from '../support/contract-helpers.js';

/**
 * A publisher and a subscriber on one broker. `drained` resolves once every subscribed group has handled
 * (and acknowledged) everything published so far; `createTopic` prepares a topic where the broker does
 * not create them on first use.
 */
export type MessagingFixture = Readonly<{
  publisher: MessagePublisher;
  subscriber: MessageSubscriber;
  drained: () => Promise<void>;
  createTopic?: (topic: string) => Promise<void>;
}>;

type Handler = (messages: readonly InboundMessage[]) => Promise<void>;

/** A handler that records every payload it is given, in delivery order. */
const recorder = (): { handler: Handler; payloads: string[] } => {
  const payloads: string[] = [];
  return {
    payloads,
    handler: (messages) => {
      payloads.push(...messages.map((m) => m.payload));
      return Promise.resolve();
    },
  };
};

const withoutRepeats = (values: readonly string[]): string[] => [...new Set(values)];

export const messagingContract = (
  name: string,
  make: () => Promise<MessagingFixture>,
  teardown?: Teardown<MessagingFixture>,
) =>
  describe(`MessagePublisher + MessageSubscriber contract: ${name}`, () => {
    const broker = freshPerTest(make, teardown);

    const newTopic = async (): Promise<string> => {
      const topic = uniqueName('contract-topic');
      await broker().createTopic?.(topic);
      return topic;
    };

    const message = (topic: string, payload: string, key = 'k'): OutboundMessage => ({
      topic,
      key,
      payload,
      headers: { 'correlation-id': `corr-${payload}` },
    });

    const publishAll = async (messages: readonly OutboundMessage[]): Promise<void> => {
      for (const m of messages) await broker().publisher.publish(m);
    };

    it('delivers topic, key, payload and headers unchanged', async () => {
      const topic = await newTopic();
      const received: InboundMessage[] = [];
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, (messages) => {
        received.push(...messages);
        return Promise.resolve();
      });
      const sent: OutboundMessage = {
        topic,
        key: '42',
        payload: JSON.stringify({ orderId: 'o1', note: 'ünïcödé "quoted"' }),
        headers: { 'correlation-id': 'c-1', 'message-id': 'm-1' },
      };
      await broker().publisher.publish(sent);
      await broker().drained();
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject(sent);
      expect(typeof received[0]?.partition).toBe('number');
      expect(typeof received[0]?.offset).toBe('string');
    });

    it('never delivers inside the call to publish', async () => {
      const topic = await newTopic();
      let publishReturned = false;
      const deliveredBeforeReturn: boolean[] = [];
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, (messages) => {
        deliveredBeforeReturn.push(...messages.map(() => !publishReturned));
        return Promise.resolve();
      });
      const publishing = broker().publisher.publish(message(topic, 'm1'));
      publishReturned = true;
      await publishing;
      await broker().drained();
      expect(deliveredBeforeReturn).toEqual([false]);
    });

    it("delivers many messages published in one call, each once, in order per key, a key's batch together", async () => {
      const [topic, other] = [await newTopic(), await newTopic()];
      const batches: Array<{ topic: string; payloads: string[] }> = [];
      const record: (topic: string) => Handler = (t) => (messages) => {
        batches.push({ topic: t, payloads: messages.map((m) => m.payload) });
        return Promise.resolve();
      };
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, record(topic));
      await broker().subscriber.subscribe({ topic: other, groupId: uniqueName('group') }, record(other));
      const sent = [
        ...Array.from({ length: 40 }, (_, i) => message(topic, `one-key-${i}`, 'product-1')),
        message(other, 'elsewhere', 'product-2'),
      ];
      await broker().publisher.publishMany(sent);
      await broker().drained();
      // what is published together for one key is fetched together: a consumer can merge it
      expect(batches.filter((b) => b.topic === topic)).toEqual([
        { topic, payloads: sent.slice(0, 40).map((m) => m.payload) },
      ]);
      expect(batches.filter((b) => b.topic === other)).toEqual([{ topic: other, payloads: ['elsewhere'] }]);
    });

    it('delivers the messages of one key in publish order', async () => {
      const topic = await newTopic();
      const { handler, payloads } = recorder();
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, handler);
      const sent = Array.from({ length: 30 }, (_, i) =>
        message(topic, `${i % 2 ? 'odd' : 'even'}-${i}`, `key-${i % 2}`),
      );
      await publishAll(sent);
      await broker().drained();
      for (const key of ['even', 'odd'])
        expect(payloads.filter((p) => p.startsWith(key))).toEqual(
          sent.map((m) => m.payload).filter((p) => p.startsWith(key)),
        );
    });

    it('delivers a batch again when the handler throws, and skips nothing after it', async () => {
      const topic = await newTopic();
      const seen: string[] = [];
      const handled: string[] = [];
      let failures = 0;
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, (messages) => {
        const payloads = messages.map((m) => m.payload);
        seen.push(...payloads);
        if (payloads.includes('m2') && failures === 0) {
          failures += 1;
          return Promise.reject(new Error('handler failed once'));
        }
        handled.push(...payloads);
        return Promise.resolve();
      });
      await publishAll(['m0', 'm1', 'm2', 'm3', 'm4'].map((p) => message(topic, p)));
      await eventually(() => expect(failures).toBe(1));
      await publishAll(['m5', 'm6', 'm7'].map((p) => message(topic, p)));
      await broker().drained();
      expect(seen.filter((p) => p === 'm2').length).toBeGreaterThanOrEqual(2);
      expect(withoutRepeats(handled)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    });

    it('gives every group on a topic every message', async () => {
      const topic = await newTopic();
      const first = recorder();
      const second = recorder();
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, first.handler);
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, second.handler);
      await publishAll(['m0', 'm1', 'm2', 'm3'].map((p) => message(topic, p)));
      await broker().drained();
      expect(first.payloads).toEqual(['m0', 'm1', 'm2', 'm3']);
      expect(second.payloads).toEqual(['m0', 'm1', 'm2', 'm3']);
    });

    it('keeps topics apart', async () => {
      const topic = await newTopic();
      const otherTopic = await newTopic();
      const { handler, payloads } = recorder();
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, handler);
      const other = recorder();
      await broker().subscriber.subscribe({ topic: otherTopic, groupId: uniqueName('group') }, other.handler);
      await broker().publisher.publish(message(otherTopic, 'elsewhere'));
      await broker().publisher.publish(message(topic, 'here'));
      await broker().drained();
      expect(payloads).toEqual(['here']);
      expect(other.payloads).toEqual(['elsewhere']);
    });

    it('continues a re-subscribing group from its committed offset, without replays', async () => {
      const topic = await newTopic();
      const groupId = uniqueName('group');
      const before = recorder();
      await broker().subscriber.subscribe({ topic, groupId }, before.handler);
      await publishAll(['m0', 'm1', 'm2'].map((p) => message(topic, p)));
      await broker().drained();
      expect(before.payloads).toEqual(['m0', 'm1', 'm2']);
      await broker().subscriber.stop();

      await broker().publisher.publish(message(topic, 'm3'));
      const after = recorder();
      await broker().subscriber.subscribe({ topic, groupId }, after.handler);
      await broker().publisher.publish(message(topic, 'm4'));
      await broker().drained();
      expect(after.payloads).toEqual(['m3', 'm4']);
      expect(before.payloads).toEqual(['m0', 'm1', 'm2']);
    });
    it('ends every subscription on stop; a later subscribe revives only its own group', async () => {
      const topic = await newTopic();
      const kept = recorder();
      const stopped = recorder();
      const keptGroup = uniqueName('group');
      await broker().subscriber.subscribe({ topic, groupId: keptGroup }, kept.handler);
      await broker().subscriber.subscribe({ topic, groupId: uniqueName('group') }, stopped.handler);
      await broker().publisher.publish(message(topic, 'm0'));
      await broker().drained();
      await broker().subscriber.stop();

      const resumed = recorder();
      await broker().subscriber.subscribe({ topic, groupId: keptGroup }, resumed.handler);
      await broker().publisher.publish(message(topic, 'm1'));
      await broker().drained();
      expect(resumed.payloads).toEqual(['m1']);
      expect(kept.payloads).toEqual(['m0']);
      expect(stopped.payloads).toEqual(['m0']);
    });
  });
