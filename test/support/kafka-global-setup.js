// @ts-check
/**
 * Jest's global setup for the tiers that talk to Kafka (int, e2e, chaos): one 3-broker Apache Kafka cluster
 * (KRaft, fetched from Maven Central by scripts/kafka-cluster) for the whole test run. Every test file gets
 * its own namespace of topics and consumer groups on it (test/support/kafka.ts). The workers find it through
 * SECKILL_TEST_KAFKA; the teardown (kafka-global-teardown.js) stops it.
 *
 * - SECKILL_KAFKA_BROKERS set: the tests use that cluster instead and start none.
 * - No Java: librdkafka's mock cluster, one per test file, said loudly: it is not a real Kafka.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..');
const say = (/** @type {string} */ line) => process.stderr.write(`\n[kafka] ${line}\n`);

export default async function setup() {
  if (process.env['SECKILL_TEST_KAFKA']) return; // another tier of this run has set it up
  const given = process.env['SECKILL_KAFKA_BROKERS'];
  if (given) {
    process.env['SECKILL_TEST_KAFKA'] = 'external';
    say(`the Kafka tests run against the cluster at ${given} (SECKILL_KAFKA_BROKERS)`);
    return;
  }
  const compiled = path.join(root, 'dist', 'scripts', 'kafka', 'cluster.js');
  if (!fs.existsSync(compiled)) throw new Error(`${compiled} is missing: npm run build first`);
  const { KafkaCluster, javaVersion } = await import(compiled);
  const java = await javaVersion();
  if (java === null) {
    process.env['SECKILL_TEST_KAFKA'] = 'mock';
    const banner = '!'.repeat(100);
    say(
      `${banner}\n[kafka] NO JAVA ON THIS MACHINE: the Kafka tests fall back to librdkafka's mock cluster (kcat).\n` +
        '[kafka] It is NOT a real Kafka: no controller, no replication, no idempotent producer, no real\n' +
        '[kafka] rebalancing. Install Java 17 and Maven (bash .ci/run does) to test against Apache Kafka.\n' +
        banner,
    );
    return;
  }
  const started = Date.now();
  const cluster = await KafkaCluster.start({
    brokers: 3,
    dir: path.join(root, '.cache', 'kafka', 'test-cluster'),
    say: (/** @type {string} */ line) => say(line),
  });
  process.env['SECKILL_TEST_KAFKA'] = cluster.dir;
  /** @type {any} */ (globalThis).__seckillKafkaCluster = cluster;
  say(
    `the Kafka tests run against ${cluster.description} at ${cluster.brokers} ` +
      `(${java}; up in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
}
