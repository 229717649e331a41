import type { MikroORM } from '@mikro-orm/mysql';
import type { Kafka } from 'kafkajs';
import { Topics } from '../application/index.js';
import { createKafka } from '../adapters/kafka/kafka-connection.js';
import { KafkaConsumerLag } from '../adapters/kafka/kafka-consumer-lag.js';
import { KafkaHealthCheck } from '../adapters/kafka/kafka-health-check.js';
import { KafkaMessagePublisher } from '../adapters/kafka/kafka-message-publisher.js';
import { KafkaNames } from '../adapters/kafka/kafka-names.js';
import { createTopics, topicMetadata } from '../adapters/kafka/kafka-topics.js';
import { openMySql } from '../adapters/mysql/mysql-orm.js';
import { connectRedis, type RedisClient } from '../adapters/redis/redis-connection.js';
import type { Config } from './config.js';
import type { AppLogger } from './logger.js';

/** MySQL's pool alone: what the real profile's stores need (a projections rebuild opens nothing else). */
export type MySqlResources = Readonly<{ orm: MikroORM; close: () => Promise<void> }>;

/** The connections of the real profile, opened before the container is built and closed with the service. */
export type RealResources = MySqlResources &
  Readonly<{
    redis: RedisClient;
    /** a second connection: a subscribed Redis connection can run no other command */
    redisSubscriber: RedisClient;
    /** one connection of its own for the readiness check: a full orders pool does not fail it, nor it the pool */
    healthOrm: MikroORM;
    kafka: Kafka;
    kafkaNames: KafkaNames;
    publisher: KafkaMessagePublisher;
    kafkaHealth: KafkaHealthCheck;
    consumerLag: KafkaConsumerLag;
  }>;

export const openMySqlResources = async (config: Config): Promise<MySqlResources> => {
  const orm = await openMySql({ url: config.mysqlUrl, ...config.mysql });
  return { orm, close: () => orm.close(true) };
};

/**
 * Creates the service's topics (replication and `min.insync.replicas` as configured; a topic that exists is
 * left alone) and says loudly when an existing topic is replicated less than configured: with fewer
 * replicas than `min.insync.replicas`, or with one replica, a broker's death loses or blocks messages.
 */
const ensureTopics = async (
  kafka: Kafka,
  config: Config,
  names: KafkaNames,
  logger: AppLogger,
): Promise<void> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = Object.values(Topics).map((topic) => names.topic(topic));
    // only the missing ones: asking to create a topic that exists is logged as an error by KafkaJS
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic));
    const created = await createTopics(
      admin,
      missing.map((topic) => ({
        topic,
        numPartitions: config.kafka.partitions,
        replicationFactor: config.kafka.replicationFactor,
        configEntries: [{ name: 'min.insync.replicas', value: String(config.kafka.minInsyncReplicas) }],
      })),
    );
    const { topics: found } = await topicMetadata(admin, topics);
    const layout = found.map((t) => ({
      topic: t.name,
      partitions: t.partitions.length,
      replicas: Math.min(...t.partitions.map((p) => p.replicas.length)),
    }));
    logger.info({ created: created ? missing : [], layout }, 'kafka topics checked');
    for (const t of layout.filter((l) => l.replicas < config.kafka.replicationFactor))
      logger.warn(t, `kafka topic ${t.topic} has fewer replicas than SECKILL_KAFKA_REPLICATION`);
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
  const healthOrm = await openMySql({ url: config.mysqlUrl, ...config.mysql, poolMin: 0, poolMax: 1 });
  const kafka = createKafka(
    {
      brokers: config.kafkaBrokers,
      clientId: config.kafka.clientId,
      requestTimeoutMs: config.kafka.requestTimeoutMs,
    },
    logger,
  );
  const names = new KafkaNames(config.kafka.namespace);
  if (config.kafka.createTopics) await ensureTopics(kafka, config, names, logger);
  const publisher = new KafkaMessagePublisher(kafka, {
    sendTimeoutMs: config.kafka.requestTimeoutMs,
    idempotent: config.kafka.idempotent,
    names,
  });
  // buyers never wait for the broker: connect in the background; a publish before that waits or fails to the outbox
  publisher
    .connect()
    .catch((error: unknown) => logger.warn({ err: String(error) }, 'kafka producer not connected yet'));
  const kafkaHealth = new KafkaHealthCheck(kafka);
  const consumerLag = new KafkaConsumerLag(kafka, names);
  return {
    redis,
    redisSubscriber,
    orm,
    healthOrm,
    kafka,
    kafkaNames: names,
    publisher,
    kafkaHealth,
    consumerLag,
    close: async () => {
      await Promise.allSettled([publisher.disconnect(), kafkaHealth.close(), consumerLag.close()]);
      await Promise.all([orm.close(true), healthOrm.close(true)]);
      redisSubscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
};
