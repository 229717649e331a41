import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { Topics } from '../../src/application/index.js';
import { groupLag } from '../../src/adapters/kafka/kafka-consumer-lag.js';
import { KafkaNames } from '../../src/adapters/kafka/kafka-names.js';
import { createTopics } from '../../src/adapters/kafka/kafka-topics.js';
import { KafkaCluster } from '../../scripts/kafka/cluster.js';
import { startKafkaMock } from '../../scripts/kafka-mock.js';

/**
 * The Kafka a test talks to. Jest's global setup (test/support/kafka-global-setup.js) starts one 3-broker
 * Apache Kafka cluster per test run and says so; each test gets a namespace of its own on it, so topics and
 * consumer groups never meet another test's. Where Java is missing, the setup says loudly that it falls
 * back to librdkafka's mock cluster (one per test file); SECKILL_KAFKA_BROKERS points the tests at a
 * cluster of one's own instead.
 */
export type TestBroker = Readonly<{
  brokers: string;
  /** "Apache Kafka 4.1.1, 3 brokers (KRaft)", or what else the tests run against */
  description: string;
  /** the local cluster of this test run: its nodes can be killed, frozen and restarted; null otherwise */
  cluster: KafkaCluster | null;
  /** this test's names on the broker */
  names: KafkaNames;
  /** the service's settings for this broker */
  env: Record<string, string>;
  /**
   * Creates topics (the service's names, behind this test's namespace) as the service does at start:
   * replication 3 and min.insync.replicas 2 on 3 brokers. A real broker does not create a topic for a
   * consumer that subscribes first; the mock creates them on first use, so there it does nothing.
   */
  createTopics: (...topics: string[]) => Promise<void>;
  /** the whole broker stops answering (every node frozen), then answers again */
  freeze: () => Promise<void>;
  thaw: () => Promise<void>;
  /** removes this test's topics (the shared cluster) or stops the mock */
  stop: () => Promise<void>;
}>;

const SHARED = process.env['SECKILL_TEST_KAFKA'];

const serviceEnv = (names: KafkaNames, real: boolean): Record<string, string> => ({
  SECKILL_KAFKA_NAMESPACE: names.namespace,
  // a real cluster takes the production settings; the mock has no controller for either
  SECKILL_KAFKA_CREATE_TOPICS: String(real),
  SECKILL_KAFKA_IDEMPOTENT: String(real),
  SECKILL_KAFKA_PARTITIONS: '4',
});

const adminOf = (brokers: string) =>
  new Kafka({ clientId: 'test-cleanup', brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();

/** Deletes the topics of a namespace (best effort: a test that froze or killed a node may leave it slow). */
const dropTopics = async (brokers: string, names: KafkaNames): Promise<void> => {
  const admin = adminOf(brokers);
  try {
    await admin.connect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${names.namespace}.`));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 10_000 });
  } catch {
    // the next test run starts a fresh cluster anyway
  } finally {
    await admin.disconnect();
  }
};

const createTopicsOn =
  (brokers: string, names: KafkaNames) =>
  async (...topics: string[]): Promise<void> => {
    const admin = adminOf(brokers);
    await admin.connect();
    try {
      const { brokers: nodes } = await admin.describeCluster();
      const replicationFactor = Math.min(3, nodes.length);
      await createTopics(
        admin,
        topics.map((topic) => ({
          topic: names.topic(topic),
          numPartitions: 4,
          replicationFactor,
          configEntries: [{ name: 'min.insync.replicas', value: String(Math.min(2, replicationFactor)) }],
        })),
      );
    } finally {
      await admin.disconnect();
    }
  };

const freshNames = () => new KafkaNames(`t-${randomUUID().slice(0, 8)}`);

const onCluster = (cluster: KafkaCluster): TestBroker => {
  const names = freshNames();
  const all = (signal: (id: number) => Promise<void>) => async () => {
    for (const node of cluster.nodes) await signal(node.id);
  };
  return {
    brokers: cluster.brokers,
    description: cluster.description,
    cluster,
    names,
    env: serviceEnv(names, true),
    createTopics: createTopicsOn(cluster.brokers, names),
    freeze: all((id) => cluster.freeze(id)),
    thaw: async () => {
      await all((id) => cluster.thaw(id))();
      await cluster.ready(60_000);
    },
    stop: () => dropTopics(cluster.brokers, names),
  };
};

export const startTestBroker = async (): Promise<TestBroker> => {
  const given = process.env['SECKILL_KAFKA_BROKERS'];
  if (given) {
    const names = freshNames();
    const none = () => Promise.reject(new Error('cannot freeze a cluster given by SECKILL_KAFKA_BROKERS'));
    return {
      brokers: given,
      description: `the Kafka cluster at ${given}`,
      cluster: null,
      names,
      env: serviceEnv(names, true),
      createTopics: createTopicsOn(given, names),
      freeze: none,
      thaw: none,
      stop: () => dropTopics(given, names),
    };
  }
  if (SHARED && SHARED !== 'mock') return onCluster(KafkaCluster.attach(SHARED));
  const mock = await startKafkaMock();
  const names = freshNames();
  return {
    brokers: mock.brokers,
    description: "librdkafka's mock cluster (kcat), NOT a real Kafka",
    cluster: null,
    names,
    env: serviceEnv(names, false),
    createTopics: () => Promise.resolve(),
    freeze: () => Promise.resolve(mock.freeze()),
    thaw: () => Promise.resolve(mock.thaw()),
    stop: () => mock.stop(),
  };
};

/** The local cluster of this test run; throws (failing the drill) where the tests run on something else. */
export const requireCluster = (broker: TestBroker): KafkaCluster => {
  if (!broker.cluster)
    throw new Error(`this drill needs the test run's own Kafka cluster, not ${broker.description}`);
  return broker.cluster;
};

/** The partition of `topic` (the service's name) that the service's producer puts `key` in. */
export const partitionOf = async (broker: TestBroker, topic: string, key: string): Promise<number> => {
  const admin = adminOf(broker.brokers);
  await admin.connect();
  try {
    const physical = broker.names.topic(topic);
    const { topics } = await admin.fetchTopicMetadata({ topics: [physical] });
    const partitionMetadata = topics[0]?.partitions ?? [];
    return Partitioners.DefaultPartitioner()({
      topic: physical,
      partitionMetadata,
      message: { key, value: null },
    });
  } finally {
    await admin.disconnect();
  }
};

/**
 * Where a product's orders go on the test cluster: the order topic (its name on the broker), the partition
 * the product's key maps to, and the node leading that partition now.
 */
export const orderPartitionOf = async (
  broker: TestBroker,
  productId: number,
): Promise<Readonly<{ topic: string; partition: number; leader: number }>> => {
  const cluster = requireCluster(broker);
  const topic = broker.names.topic(Topics.ORDERS_RESERVED);
  const partition = await partitionOf(broker, Topics.ORDERS_RESERVED, String(productId));
  return { topic, partition, leader: await cluster.leaderOf(topic, partition) };
};

/**
 * Resolves once every (group, topic) has committed offsets up to the end of every partition, i.e. has
 * handled and acknowledged everything published so far. Polls the broker; gives up after `timeoutMs`.
 * Groups and topics are the service's names, put behind `names` on the broker.
 */
export const groupsCaughtUp = async (
  kafka: Kafka,
  subscriptions: ReadonlyArray<Readonly<{ groupId: string; topic: string }>>,
  names: KafkaNames,
  timeoutMs = 30_000,
): Promise<void> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let behind = 0;
      for (const { groupId, topic } of subscriptions)
        behind += await groupLag(admin, names.group(groupId), names.topic(topic));
      if (behind === 0) return;
      if (Date.now() > deadline) throw new Error(`consumer groups still ${behind} messages behind`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await admin.disconnect();
  }
};
