import { afterAll, beforeAll } from '@jest/globals';
import type { Kafka } from 'kafkajs';
import type { MessageSubscriber } from '../../src/application/index.js';
import { createKafka } from '../../src/adapters/kafka/kafka-connection.js';
import { KafkaMessagePublisher } from '../../src/adapters/kafka/kafka-message-publisher.js';
import { KafkaMessageSubscriber } from '../../src/adapters/kafka/kafka-message-subscriber.js';
import { messagingContract } from '../contract/messaging.contract.js';
import { silentLogger } from '../support/contract-helpers.js';
import { groupsCaughtUp, startTestBroker, type TestBroker } from '../support/kafka.js';

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = createKafka({ brokers: broker.brokers.split(',') }, silentLogger);
}, 30_000);

afterAll(async () => {
  await broker.stop();
});

messagingContract(
  `Kafka (KafkaJS on ${process.env['SECKILL_TEST_KAFKA'] === 'mock' ? "librdkafka's mock cluster" : 'Apache Kafka'})`,
  () => {
    const publisher = new KafkaMessagePublisher(kafka, {
      names: broker.names,
      idempotent: broker.cluster !== null,
    });
    const inner = new KafkaMessageSubscriber(kafka, silentLogger, {
      retryDelayMs: 100,
      sessionTimeoutMs: 6_000,
      maxWaitTimeMs: 200,
      names: broker.names,
    });
    const subscriptions: Array<{ groupId: string; topic: string }> = [];
    const subscriber: MessageSubscriber = {
      subscribe: async (spec, handler) => {
        subscriptions.push({ ...spec });
        await inner.subscribe(spec, handler);
      },
      stop: async () => {
        subscriptions.length = 0;
        await inner.stop();
      },
    };
    return Promise.resolve({
      publisher,
      subscriber,
      drained: () => groupsCaughtUp(kafka, subscriptions, broker.names),
      createTopic: (topic: string) => broker.createTopics(topic),
    });
  },
  async (fixture) => {
    await fixture.subscriber.stop();
    await (fixture.publisher as KafkaMessagePublisher).disconnect();
  },
);
