import type { Admin, ITopicConfig } from 'kafkajs';

/** An error, or one it wraps (KafkaJS wraps what it gives up on), that asking again can cure. */
const transient = (error: unknown, depth = 0): boolean => {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const { type, retriable, cause, originalError } = error as Record<string, unknown>;
  if (type === 'UNKNOWN_TOPIC_OR_PARTITION' || type === 'LEADER_NOT_AVAILABLE' || retriable === true)
    return true;
  return transient(cause, depth + 1) || transient(originalError, depth + 1);
};

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
