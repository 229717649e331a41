import type { Kafka } from 'kafkajs';
import type { HealthCheck } from '../../application/index.js';
import { SharedAdmin } from './kafka-connection.js';

export class KafkaHealthCheck implements HealthCheck {
  readonly name = 'kafka';
  private readonly admin: SharedAdmin;

  constructor(kafka: Kafka) {
    this.admin = new SharedAdmin(kafka);
  }

  async check(): Promise<void> {
    const cluster = await this.admin.use((admin) => admin.describeCluster());
    if (cluster.brokers.length === 0) throw new Error('no broker in the cluster metadata');
  }

  close(): Promise<void> {
    return this.admin.close();
  }
}
