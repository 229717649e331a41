import { type Kafka, type Message, Partitioners, type Producer } from 'kafkajs';
import {
  InfrastructureUnavailable,
  type MessagePublisher,
  type OutboundMessage,
} from '../../application/index.js';

/**
 * Publishes with acks from every in-sync replica (`acks: -1`), the message key being the product id so that
 * one product's orders stay in one partition, in order. Not idempotent: the test broker cannot do it, and
 * the consumers are idempotent anyway.
 */
export class KafkaMessagePublisher implements MessagePublisher {
  private readonly producer: Producer;
  private connecting: Promise<void> | null = null;

  constructor(
    kafka: Kafka,
    private readonly sendTimeoutMs = 5_000,
  ) {
    this.producer = kafka.producer({
      allowAutoTopicCreation: true,
      idempotent: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.connecting = null;
    });
  }

  publish(message: OutboundMessage): Promise<void> {
    return this.publishMany([message]);
  }

  /** One produce request per broker for the whole batch, every topic in it. */
  async publishMany(messages: readonly OutboundMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const byTopic = new Map<string, Message[]>();
    for (const m of messages) {
      const list = byTopic.get(m.topic) ?? [];
      byTopic.set(m.topic, list);
      list.push({ key: m.key, value: m.payload, headers: { ...m.headers } });
    }
    try {
      await this.connect();
      await this.producer.sendBatch({
        acks: -1,
        timeout: this.sendTimeoutMs,
        topicMessages: [...byTopic].map(([topic, list]) => ({ topic, messages: list })),
      });
    } catch (error) {
      throw new InfrastructureUnavailable(
        'kafka',
        `publish to ${[...byTopic.keys()].join(', ')}: ${String(error)}`,
        { cause: error },
      );
    }
  }

  /** Connects once; a failed connection is tried again by the next publish. */
  connect(): Promise<void> {
    this.connecting ??= this.producer.connect().catch((error: unknown) => {
      this.connecting = null;
      throw error;
    });
    return this.connecting;
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
  }
}
