import type { Admin, Kafka } from 'kafkajs';
import {
  type ConsumerLag,
  type GroupLag,
  InfrastructureUnavailable,
  WATCHED_GROUPS,
} from '../../application/index.js';
import { kafkaErrorMatches, SharedAdmin } from './kafka-connection.js';
import { KafkaNames } from './kafka-names.js';

/** Messages of a topic a group has not committed yet: the end of each partition minus the group's offset. */
export const groupLag = async (admin: Admin, groupId: string, topic: string): Promise<number> => {
  const ends = await admin.fetchTopicOffsets(topic);
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  let behind = 0n;
  for (const end of ends) {
    const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
    const done = BigInt(at === '-1' ? end.low : at);
    if (done < BigInt(end.high)) behind += BigInt(end.high) - done;
  }
  return Number(behind);
};

/** A topic nobody has created yet, also under KafkaJS's retry wrappers. */
const unknownTopic = (error: unknown): boolean =>
  kafkaErrorMatches(error, (e) => e['type'] === 'UNKNOWN_TOPIC_OR_PARTITION');

/** Consumer lag read from the broker's offsets through one admin connection. */
export class KafkaConsumerLag implements ConsumerLag {
  private readonly admin: SharedAdmin;

  constructor(
    kafka: Kafka,
    private readonly names = new KafkaNames(),
  ) {
    this.admin = new SharedAdmin(kafka);
  }

  async lag(): Promise<GroupLag[]> {
    try {
      return await this.admin.use(async (admin) => {
        const lags: GroupLag[] = [];
        for (const { groupId, topic } of WATCHED_GROUPS) {
          // a topic nobody has published to yet does not exist: nothing to be behind on
          const lag = await groupLag(admin, this.names.group(groupId), this.names.topic(topic)).catch(
            (error: unknown) => {
              if (unknownTopic(error)) return 0;
              throw error;
            },
          );
          lags.push({ groupId, topic, lag });
        }
        return lags;
      });
    } catch (error) {
      this.admin.drop();
      throw new InfrastructureUnavailable('kafka', `consumer lag: ${String(error)}`, { cause: error });
    }
  }

  close(): Promise<void> {
    return this.admin.close();
  }
}
