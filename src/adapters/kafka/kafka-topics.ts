import type { Admin, ITopicConfig } from 'kafkajs';

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
      if (attempt >= attempts || (error as { retriable?: unknown }).retriable !== true) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
};
