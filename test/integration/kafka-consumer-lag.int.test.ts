import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Kafka } from 'kafkajs';
import { ConsumerGroups, type InboundMessage, Topics } from '../../src/application/index.js';
import { createKafka } from '../../src/adapters/kafka/kafka-connection.js';
import { KafkaConsumerLag } from '../../src/adapters/kafka/kafka-consumer-lag.js';
import { KafkaMessagePublisher } from '../../src/adapters/kafka/kafka-message-publisher.js';
import { KafkaMessageSubscriber } from '../../src/adapters/kafka/kafka-message-subscriber.js';
import { eventually, silentLogger } from '../support/contract-helpers.js';
import { startTestBroker, type TestBroker } from '../support/kafka.js';

describe("KafkaConsumerLag on the test run's Kafka", () => {
  let broker: TestBroker;
  let kafka: Kafka;

  beforeAll(async () => {
    broker = await startTestBroker();
    kafka = createKafka({ brokers: broker.brokers.split(',') }, silentLogger);
  }, 30_000);

  afterAll(async () => {
    await broker.stop();
  });

  it('reports nothing behind before any message, what the commit group has not acknowledged, then 0', async () => {
    const lag = new KafkaConsumerLag(kafka, broker.names);
    const publisher = new KafkaMessagePublisher(kafka, {
      names: broker.names,
      idempotent: broker.cluster !== null,
    });
    const subscriber = new KafkaMessageSubscriber(kafka, silentLogger, {
      retryDelayMs: 100,
      sessionTimeoutMs: 6_000,
      maxWaitTimeMs: 200,
      names: broker.names,
    });
    const of = async (groupId: string) => (await lag.lag()).find((g) => g.groupId === groupId)?.lag;
    try {
      expect(await of(ConsumerGroups.COMMIT)).toBe(0);
      await broker.createTopics(Topics.ORDERS_RESERVED);
      expect(await of(ConsumerGroups.COMMIT)).toBe(0);
      for (let i = 0; i < 5; i++)
        await publisher.publish({
          topic: Topics.ORDERS_RESERVED,
          key: '1',
          payload: `{"n":${i}}`,
          headers: {},
        });
      await eventually(async () => expect(await of(ConsumerGroups.COMMIT)).toBe(5), 10_000, 100);
      expect(await of(ConsumerGroups.COMPENSATION)).toBe(0);

      const handled: InboundMessage[] = [];
      await subscriber.subscribe(
        { topic: Topics.ORDERS_RESERVED, groupId: ConsumerGroups.COMMIT },
        (batch) => {
          handled.push(...batch);
          return Promise.resolve();
        },
      );
      await eventually(async () => expect(await of(ConsumerGroups.COMMIT)).toBe(0), 20_000, 100);
      expect(handled).toHaveLength(5);
    } finally {
      await subscriber.stop();
      await publisher.disconnect();
      await lag.close();
    }
  }, 40_000);
});
