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
export const createTopics = async (admin: Admin, topics: ITopicConfig[], attempts = 5): Promise<boolean> =>
  topics.length === 0
    ? false
    : askAgain(() => admin.createTopics({ waitForLeaders: true, topics }), attempts);

/**
 * The topics' metadata, asked again while a broker has not heard of them yet: another process may have just
 * created them (two processes starting together both find them missing, one creates them, and the other's
 * create answers "exists" without waiting for the leaders).
 */
export const topicMetadata = (admin: Admin, topics: string[], attempts = 8) =>
  askAgain(() => admin.fetchTopicMetadata({ topics }), attempts);

const askAgain = async <T>(ask: () => Promise<T>, attempts: number): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (error) {
      if (attempt >= attempts || !transient(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
};
