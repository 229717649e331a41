import type { HealthCheck } from '../../application/index.js';
import { Cluster } from 'ioredis';
import type { RedisClient } from './redis-connection.js';

export class RedisHealthCheck implements HealthCheck {
  readonly name = 'redis';

  constructor(private readonly client: RedisClient) {}

  async check(): Promise<void> {
    const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    if (nodes.length === 0) throw new Error('no Redis node is connected');
    await Promise.all(nodes.map((node) => node.ping()));
  }
}
