/**
 * The broker the bench runs on: a 3-broker Apache Kafka cluster of its own (scripts/kafka/cluster.ts, in
 * .cache/kafka/bench-cluster), as the service is deployed. Where Java is missing, librdkafka's mock cluster
 * (kcat), said loudly and recorded in the results: its figures are not a real broker's.
 */
import path from 'node:path';
import { javaVersion, KafkaCluster, kafkaCacheDir } from '../../scripts/kafka/cluster.js';
import { startKafkaMock } from '../../scripts/kafka-mock.js';

export type BenchBroker = Readonly<{
  brokers: string;
  /** what latest.json records: kind, version, broker count */
  facts: Readonly<{
    kind: 'apache-kafka' | 'kcat-mock';
    version: string;
    brokers: number;
    java: string | null;
  }>;
  description: string;
  /** the broker processes, for the CPU probes */
  pids: readonly number[];
  /** the service's settings for this broker */
  env: Readonly<Record<string, string>>;
  /** the Apache Kafka cluster itself (for a deployment to run on), or null on the mock */
  cluster: KafkaCluster | null;
  stop: () => Promise<void>;
}>;

export const startBenchBroker = async (
  say: (line: string) => void,
  /** the mock on purpose (BENCH_KAFKA=mock), to compare with Apache Kafka on the same machine */
  useMock = false,
  /** Apache Kafka nodes: 3 (replication 3, min.insync 2) or 1 */
  brokers: 1 | 3 = 3,
): Promise<BenchBroker> => {
  const java = await javaVersion();
  if (java === null || useMock) {
    const mock = await startKafkaMock();
    say(
      java === null
        ? "!!! NO JAVA: the bench runs on librdkafka's mock cluster (kcat), NOT on a real Kafka; its Kafka figures are not comparable"
        : "BENCH_KAFKA=mock: librdkafka's mock cluster (kcat), NOT a real Kafka; figures go to bench/results/latest-mock.json",
    );
    return {
      brokers: mock.brokers,
      facts: { kind: 'kcat-mock', version: 'librdkafka mock', brokers: 3, java: null },
      description: `librdkafka's mock cluster (kcat), pid ${mock.pid}`,
      pids: [mock.pid],
      env: { SECKILL_KAFKA_CREATE_TOPICS: 'false', SECKILL_KAFKA_IDEMPOTENT: 'false' },
      cluster: null,
      stop: () => mock.stop(),
    };
  }
  const cluster = await KafkaCluster.start({
    brokers,
    dir: path.join(kafkaCacheDir(), `bench-cluster-${brokers}`),
    say,
  });
  const pids = cluster.nodes.map((n) => cluster.pidOf(n.id));
  return {
    brokers: cluster.brokers,
    facts: { kind: 'apache-kafka', version: cluster.version, brokers: cluster.nodes.length, java },
    description: `${cluster.description} at ${cluster.brokers}, pids ${pids.join(' ')}`,
    pids,
    // the production settings: topics created by the service, replication 3, min.insync 2, idempotent
    // producer; on one node, replication 1
    env: {
      SECKILL_KAFKA_CREATE_TOPICS: 'true',
      SECKILL_KAFKA_IDEMPOTENT: 'true',
      ...(brokers === 1 ? { SECKILL_KAFKA_REPLICATION: '1', SECKILL_KAFKA_MIN_INSYNC_REPLICAS: '1' } : {}),
    },
    cluster,
    stop: () => cluster.destroy(),
  };
};
