import { type Kafka, Partitioners, type Producer } from 'kafkajs';
import {
  InfrastructureUnavailable,
  type MessagePublisher,
  type OutboundMessage,
} from '../../application/index.js';
import { KafkaNames } from './kafka-names.js';
import { recordsOf } from './kafka-packs.js';

export type KafkaPublisherOptions = Readonly<{
  /** a send without the brokers' acknowledgement by then fails (the outbox relay sends it again) */
  sendTimeoutMs?: number;
  /**
   * The idempotent producer (on by default): the brokers drop a batch the producer retried after a lost
   * acknowledgement, so a broker failure never writes a message twice. Off only for a broker without a
   * controller (librdkafka's mock cluster), which cannot hand out producer ids.
   */
  idempotent?: boolean;
  names?: KafkaNames;
}>;

/**
 * Publishes with acks from every in-sync replica (`acks: -1`), the message key being the product id so that
 * one product's orders stay in one partition, in order.
 *
 * Sends go out one at a time: KafkaJS numbers an idempotent producer's batches per partition, and two sends
 * racing on one partition can be refused as out of order. One send at a time costs nothing here, because
 * each send already carries a whole batch of the outbox.
 */
export class KafkaMessagePublisher implements MessagePublisher {
  private producer: Producer;
  private readonly names: KafkaNames;
  private readonly sendTimeoutMs: number;
  private connecting: Promise<void> | null = null;
  private readonly idempotent: boolean;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly kafka: Kafka,
    options: KafkaPublisherOptions = {},
  ) {
    this.sendTimeoutMs = options.sendTimeoutMs ?? 5_000;
    this.names = options.names ?? new KafkaNames();
    this.idempotent = options.idempotent ?? true;
    this.producer = this.newProducer();
  }

  private newProducer(): Producer {
    const producer = this.kafka.producer({
      allowAutoTopicCreation: true,
      idempotent: this.idempotent,
      maxInFlightRequests: this.idempotent ? 1 : undefined,
      createPartitioner: Partitioners.DefaultPartitioner,
      // A bounded retry: a send that still fails is left to the outbox relay, and its duplicate (if the
      // brokers had taken it after all) is skipped by the idempotent consumers.
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    producer.on(producer.events.DISCONNECT, () => {
      if (producer === this.producer) this.connecting = null;
    });
    return producer;
  }

  /**
   * After a failed send an idempotent producer no longer knows which of its batches the brokers hold (a
   * timed-out request may have been written after all), and KafkaJS would number the next batch from a
   * sequence the brokers refuse as out of order, for ever. Like Kafka's own client, start again under a new
   * producer id: the outbox relay sends what was lost, and the consumers skip what arrives twice.
   */
  private renewProducer(): void {
    const old = this.producer;
    this.producer = this.newProducer();
    this.connecting = null;
    old.disconnect().catch(() => undefined);
  }

  publish(message: OutboundMessage): Promise<void> {
    return this.publishMany([message]);
  }

  /** One produce request per broker for the whole batch, every topic in it. */
  publishMany(messages: readonly OutboundMessage[]): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    if (!this.idempotent) return this.send(messages);
    const sent = this.queue.then(() => this.send(messages));
    this.queue = sent.catch(() => undefined);
    return sent;
  }

  private async send(messages: readonly OutboundMessage[]): Promise<void> {
    const byTopic = new Map<string, OutboundMessage[]>();
    for (const m of messages) {
      const topic = this.names.topic(m.topic);
      const list = byTopic.get(topic) ?? [];
      byTopic.set(topic, list);
      list.push(m);
    }
    try {
      await this.connect();
      await this.producer.sendBatch({
        acks: -1,
        timeout: this.sendTimeoutMs,
        // the messages of one product travel together, as one record (a pack)
        topicMessages: [...byTopic].map(([topic, list]) => ({ topic, messages: recordsOf(list) })),
      });
    } catch (error) {
      if (this.idempotent) this.renewProducer();
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

  /**
   * A connection under way is let settle first: KafkaJS goes on connecting a producer disconnected meanwhile,
   * and its sockets would hold the process open after it closed (a CLI command that never exits).
   */
  async disconnect(): Promise<void> {
    await this.connecting?.catch(() => undefined);
    await this.producer.disconnect();
  }
}
