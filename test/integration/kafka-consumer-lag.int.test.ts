import type { MessageSubscriber } from '../../src/application/index.js';
import { createKafka } from '../../src/adapters/kafka/kafka-connection.js';
import { KafkaConsumerLag } from '../../src/adapters/kafka/kafka-consumer-lag.js';
import { KafkaMessagePublisher } from '../../src/adapters/kafka/kafka-message-publisher.js';
import { KafkaMessageSubscriber } from '../../src/adapters/kafka/kafka-message-subscriber.js';
import { type ConsumerLagFixture, consumerLagContract } from '../contract/consumer-lag.contract.js';
import { silentLogger } from '../support/contract-helpers.js';
import { startTestBroker } from '../support/kafka.js';

type KafkaFixture = ConsumerLagFixture & Readonly<{ close: () => Promise<void> }>;

consumerLagContract(
  `KafkaConsumerLag (KafkaJS on ${process.env['SECKILL_TEST_KAFKA'] === 'mock' ? "librdkafka's mock cluster" : 'Apache Kafka'})`,
  async (): Promise<KafkaFixture> => {
    // a namespace of its own per test: the service's group and topic names, with nothing left by another
    const broker = await startTestBroker();
    const kafka = createKafka({ brokers: broker.brokers.split(',') }, silentLogger);
    const lag = new KafkaConsumerLag(kafka, broker.names);
    const publisher = new KafkaMessagePublisher(kafka, {
      names: broker.names,
      idempotent: broker.cluster !== null,
    });
    const workers: MessageSubscriber[] = [];
    const worker = (): MessageSubscriber => {
      const subscriber = new KafkaMessageSubscriber(kafka, silentLogger, {
        retryDelayMs: 100,
        sessionTimeoutMs: 6_000,
        maxWaitTimeMs: 200,
        names: broker.names,
      });
      workers.push(subscriber);
      return subscriber;
    };
    return {
      lag,
      publisher,
      worker,
      createTopics: (...topics) => broker.createTopics(...topics),
      close: async () => {
        await Promise.allSettled(workers.map((w) => w.stop()));
        await Promise.allSettled([publisher.disconnect(), lag.close()]);
        await broker.stop();
      },
    };
  },
  (fixture) => fixture.close(),
);
