import type { Kafka } from 'kafkajs';
import { groupLag } from '../../src/adapters/kafka/kafka-consumer-lag.js';
import { type KafkaMock, startKafkaMock } from '../../scripts/kafka-mock.js';

export type TestBroker = Readonly<{ brokers: string; mock: KafkaMock | null; stop: () => Promise<void> }>;

/** SECKILL_KAFKA_BROKERS when set (a real cluster); otherwise a kcat mock cluster of this test file's own. */
export const startTestBroker = async (): Promise<TestBroker> => {
  const given = process.env['SECKILL_KAFKA_BROKERS'];
  if (given) return { brokers: given, mock: null, stop: () => Promise.resolve() };
  const mock = await startKafkaMock();
  return { brokers: mock.brokers, mock, stop: () => mock.stop() };
};

/**
 * Resolves once every (group, topic) has committed offsets up to the end of every partition, i.e. has
 * handled and acknowledged everything published so far. Polls the broker; gives up after `timeoutMs`.
 */
export const groupsCaughtUp = async (
  kafka: Kafka,
  subscriptions: ReadonlyArray<Readonly<{ groupId: string; topic: string }>>,
  timeoutMs = 30_000,
): Promise<void> => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let behind = 0;
      for (const { groupId, topic } of subscriptions) behind += await groupLag(admin, groupId, topic);
      if (behind === 0) return;
      if (Date.now() > deadline) throw new Error(`consumer groups still ${behind} messages behind`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await admin.disconnect();
  }
};
