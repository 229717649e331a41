import { RedisCluster } from '../../scripts/cluster/redis-cluster.js';

export type { RedisCluster };

/** A 3-master Redis Cluster on loopback, without replicas: for the adapters' contract suites. */
export const startRedisCluster = (): Promise<RedisCluster> => RedisCluster.start({ replicas: 0 });
