import type { MikroORM } from '@mikro-orm/mysql';
import type { Kafka } from 'kafkajs';
import { Topics } from '../application/index.js';
import { createKafka } from '../adapters/kafka/kafka-connection.js';
import { KafkaConsumerLag } from '../adapters/kafka/kafka-consumer-lag.js';
import { KafkaHealthCheck } from '../adapters/kafka/kafka-health-check.js';
import { KafkaMessagePublisher } from '../adapters/kafka/kafka-message-publisher.js';
import { openMySql } from '../adapters/mysql/mysql-orm.js';
import { connectRedis, type RedisClient } from '../adapters/redis/redis-connection.js';
import type { Config } from './config.js';
import type { AppLogger } from './logger.js';

/** The connections of the real profile, opened before the container is built and closed with the service. */
export type RealResources = Readonly<{
  redis: RedisClient;
  /** a second connection: a subscribed Redis connection can run no other command */
  redisSubscriber: RedisClient;
  orm: MikroORM;
  kafka: Kafka;
  publisher: KafkaMessagePublisher;
  kafkaHealth: KafkaHealthCheck;
  consumerLag: KafkaConsumerLag;
  close: () => Promise<void>;
}>;

const createTopics = async (kafka: Kafka, config: Config, logger: AppLogger): Promise<void> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: Object.values(Topics).map((topic) => ({
        topic,
        numPartitions: config.kafka.partitions,
        replicationFactor: config.kafka.replicationFactor,
      })),
    });
    logger.info({ created }, 'kafka topics checked');
  } finally {
    await admin.disconnect();
  }
};

export const openRealResources = async (config: Config, logger: AppLogger): Promise<RealResources> => {
  const redis = connectRedis({
    url: config.redisUrl,
    commandTimeoutMs: config.redisTimeoutMs,
    autoPipelining: config.redisAutoPipelining,
  });
  const redisSubscriber = connectRedis({ url: config.redisUrl, subscriber: true });
  const orm = await openMySql({ url: config.mysqlUrl, ...config.mysql });
  const kafka = createKafka(
    {
      brokers: config.kafkaBrokers,
      clientId: config.kafka.clientId,
      requestTimeoutMs: config.kafka.requestTimeoutMs,
    },
    logger,
  );
  if (config.kafka.createTopics) await createTopics(kafka, config, logger);
  const publisher = new KafkaMessagePublisher(kafka, config.kafka.requestTimeoutMs);
  // buyers never wait for the broker: connect in the background; a publish before that waits or fails to the outbox
  publisher
    .connect()
    .catch((error: unknown) => logger.warn({ err: String(error) }, 'kafka producer not connected yet'));
  const kafkaHealth = new KafkaHealthCheck(kafka);
  const consumerLag = new KafkaConsumerLag(kafka);
  return {
    redis,
    redisSubscriber,
    orm,
    kafka,
    publisher,
    kafkaHealth,
    consumerLag,
    close: async () => {
      await Promise.allSettled([publisher.disconnect(), kafkaHealth.close(), consumerLag.close()]);
      await orm.close(true);
      redisSubscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
};
