import type { Admin, Kafka } from 'kafkajs';
import type { HealthCheck } from '../../application/index.js';

export class KafkaHealthCheck implements HealthCheck {
  readonly name = 'kafka';
  private admin: Admin | null = null;

  constructor(private readonly kafka: Kafka) {}

  async check(): Promise<void> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    const cluster = await this.admin.describeCluster();
    if (cluster.brokers.length === 0) throw new Error('no broker in the cluster metadata');
  }

  async close(): Promise<void> {
    await this.admin?.disconnect();
  }
}
