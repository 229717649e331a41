// @ts-check
/** Stops the Kafka cluster that kafka-global-setup.js started for this test run (once, whatever the tiers). */
export default async function teardown() {
  const holder = /** @type {any} */ (globalThis);
  const cluster = holder.__seckillKafkaCluster;
  if (!cluster) return;
  holder.__seckillKafkaCluster = undefined;
  await cluster.destroy();
}
