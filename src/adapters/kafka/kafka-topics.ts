import type { Admin, ITopicConfig } from 'kafkajs';
import { kafkaErrorMatches } from './kafka-connection.js';

/** An error, or one it wraps, that asking again can cure. */
const transient = (error: unknown): boolean =>
  kafkaErrorMatches(
    error,
    (e) =>
      e['type'] === 'UNKNOWN_TOPIC_OR_PARTITION' ||
      e['type'] === 'LEADER_NOT_AVAILABLE' ||
      e['retriable'] === true,
  );

/**
 * `admin.createTopics` waiting for the new topics' leaders, asked again while the brokers have not all heard
 * of the topics yet: KafkaJS waits for the leaders by asking for the topics' metadata, and a broker the
 * controller has not told yet answers "unknown topic", which KafkaJS does not retry there. A topic that
 * exists by then is no error. Resolves true when a topic was created.
 */
export const createTopics = async (admin: Admin, topics: ITopicConfig[], attempts = 5): Promise<boolean> => {
  if (topics.length === 0) return false;
  for (let attempt = 1; ; attempt++) {
    try {
      return await admin.createTopics({ waitForLeaders: true, topics });
    } catch (error) {
      if (attempt >= attempts || !transient(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
};
