import { afterAll, beforeAll } from '@jest/globals';
import { RedisCluster } from '../../scripts/cluster/redis-cluster.js';

export type { RedisCluster };

/**
 * A 3-master Redis Cluster on loopback, without replicas, for the suites of the enclosing block (the adapters'
 * contract suites): started before them, stopped after.
 */
export const redisClusterForSuites = (): (() => RedisCluster) => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await RedisCluster.start({ replicas: 0 });
  }, 60_000);
  afterAll(async () => {
    await cluster.stop();
  });
  return () => cluster;
};
