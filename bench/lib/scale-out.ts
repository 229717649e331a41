/**
 * The service scaled out, as the bench runs it: `scripts/cluster/deployment.ts` (a Redis Cluster of 3 masters
 * with a replica each, API replicas and workers, HAProxy in front of the APIs) on the bench's own Kafka
 * cluster, with the settings of the bench's real service, and what the scale-out phase reports.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Deployment } from '../../scripts/cluster/deployment.js';
import type { GaleraCluster } from '../../scripts/cluster/galera-cluster.js';
import type { KafkaCluster } from '../../scripts/kafka/cluster.js';
import type { Probe } from './cpu.js';

const run = promisify(execFile);

/** The first line a tool prints about its version, or null when it is not installed. */
const versionOf = async (command: string, args: readonly string[]): Promise<string | null> => {
  try {
    const { stdout, stderr } = await run(command, [...args], { timeout: 10_000 });
    return (stdout || stderr).split('\n')[0]?.trim() ?? command;
  } catch {
    return null;
  }
};

/**
 * Why the scale-out phase cannot run here (no Apache Kafka, no HAProxy, no redis-server), or null when it
 * can; `haproxy` is HAProxy's version line then.
 */
export const scaleOutBlocker = async (
  kafka: KafkaCluster | null,
): Promise<Readonly<{ blocker: string | null; haproxy: string }>> => {
  const [haproxy, redis] = await Promise.all([
    versionOf('haproxy', ['-v']),
    versionOf('redis-server', ['--version']),
  ]);
  const blocker =
    kafka === null
      ? "the bench runs on librdkafka's mock cluster, and a deployment needs an Apache Kafka cluster (one of its own per side would put six more JVMs on the two cores)"
      : haproxy === null
        ? 'HAProxy is not installed (apt-get install haproxy)'
        : redis === null
          ? 'redis-server is not installed (the Redis Cluster is started from it)'
          : null;
  // "HAProxy version 2.6.12-1+deb12u4 2026/10/17 - https://haproxy.org/" → "HAProxy 2.6.12-1+deb12u4"
  return { blocker, haproxy: haproxy?.replace(/^HAProxy version (\S+).*$/, 'HAProxy $1') ?? 'none' };
};

/**
 * Settings a deployment sets itself and must keep: its Redis Cluster's URL, its database, its brokers, the
 * secret it is given, its host, and its `info` logging (the level its figures in docs/benchmarks.md were
 * measured at; the main service logs at `warn`).
 */
const DEPLOYMENT_OWN = new Set([
  'SECKILL_REDIS_URL',
  'SECKILL_MYSQL_URL',
  'SECKILL_KAFKA_BROKERS',
  'SECKILL_JWT_SECRET',
  'SECKILL_HOST',
  'SECKILL_LOG_LEVEL',
]);

/** The SECKILL_* settings of a service environment (bench/lib/service.ts) that a deployment takes as its `env`. */
export const deploymentSettings = (environment: NodeJS.ProcessEnv): Record<string, string> =>
  Object.fromEntries(
    Object.entries(environment).filter(
      (entry): entry is [string, string] =>
        entry[0].startsWith('SECKILL_') && !DEPLOYMENT_OWN.has(entry[0]) && entry[1] !== undefined,
    ),
  );

export type ScaleOutStart = Readonly<{
  apis: number;
  workers: number;
  kafka: KafkaCluster;
  /** the database: on a MySQL server by URL, or by name on a Galera cluster */
  mysql: Readonly<{ url: string } | { galera: GaleraCluster; database: string }>;
  secret: string;
  /** the service's SECKILL_* settings (deploymentSettings) */
  settings: Readonly<Record<string, string>>;
  dir: string;
  say: (line: string) => void;
}>;

/** A deployment of the service (its processes take no setting from the shell but these). */
export const startDeployment = (options: ScaleOutStart): Promise<Deployment> =>
  Deployment.start({
    apis: options.apis,
    workers: options.workers,
    kafka: options.kafka,
    ...('url' in options.mysql
      ? { mysqlUrl: options.mysql.url }
      : { galera: options.mysql.galera, database: options.mysql.database }),
    secret: options.secret,
    env: options.settings,
    dir: options.dir,
    say: options.say,
    // a bench is no failover drill: Redis's own node timeout, so that a node slowed by the load on two cores
    // is never taken for failed (the deployment's 2 s are for the scale tests' drills)
    redis: { nodeTimeoutMs: 15_000 },
  });

/**
 * The CPU probes of a deployment: its APIs together as `target` (the server under load), its workers as
 * `worker`, HAProxy as `haproxy`, its six Redis nodes as `redis`, and its Galera nodes (if it has them) as
 * `mariadb`.
 */
export const deploymentProbes = (deployment: Deployment): Probe[] => [
  ...(deployment.galera?.nodes ?? []).map((node) => ({
    name: 'mariadb',
    pid: deployment.galera?.pidOf(node.name) ?? undefined,
  })),
  ...deployment.nodes.map((node) => ({
    name: node.role === 'api' ? 'target' : 'worker',
    pid: node.child.pid,
  })),
  { name: 'haproxy', pid: deployment.balancerPid ?? undefined },
  ...deployment.redis.ports.map((port) => ({
    name: 'redis',
    pid: deployment.redis.pidOf(port) ?? undefined,
  })),
];

/** What one side of the scale-out A/B measured over its rounds. */
export type ScaleOutSide = Readonly<{
  apis: number;
  /** where its MySQL is: the machine's MariaDB, or a Galera cluster of 3 behind a single-writer HAProxy */
  mysql?: 'mariadb' | 'galera';
  /** medians over the rounds */
  floodRps: number;
  acceptRps: number;
  /** orders the workers decided (committed or released) per second while the accept load ran */
  commitRps?: number;
  floodP99Ms: number;
  acceptP99Ms: number;
  /** the APIs' and the workers' CPU per accepted order, µs */
  acceptCpuMicros: number;
  /** HAProxy's CPU per answer of the flood, µs */
  balancerMicrosPerAnswer: number;
  /** each round's figure, in the order the rounds ran */
  floodRounds: readonly number[];
  acceptRounds: readonly number[];
  /** after the rounds, once the pipeline had decided every reservation: Σ max(0, sold − listed − added) */
  oversold: number;
  auditOk: boolean;
}>;

/** Each round's raw figures of one side, as the rounds collect them. */
export type ScaleOutSamples = {
  floodRps: number[];
  acceptRps: number[];
  commitRps: number[];
  floodP99Ms: number[];
  acceptP99Ms: number[];
  acceptCpuMicros: number[];
  balancerMicrosPerAnswer: number[];
};

export const noSamples = (): ScaleOutSamples => ({
  floodRps: [],
  acceptRps: [],
  commitRps: [],
  floodP99Ms: [],
  acceptP99Ms: [],
  acceptCpuMicros: [],
  balancerMicrosPerAnswer: [],
});

export const median = (values: readonly number[]): number => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export const sideOf = (
  apis: number,
  mysql: 'mariadb' | 'galera',
  samples: ScaleOutSamples,
  books: Readonly<{ oversold: number; auditOk: boolean }>,
): ScaleOutSide => ({
  apis,
  mysql,
  floodRps: Math.round(median(samples.floodRps)),
  acceptRps: Math.round(median(samples.acceptRps)),
  commitRps: Math.round(median(samples.commitRps)),
  floodP99Ms: median(samples.floodP99Ms),
  acceptP99Ms: median(samples.acceptP99Ms),
  acceptCpuMicros: Math.round(median(samples.acceptCpuMicros)),
  balancerMicrosPerAnswer: Math.round(median(samples.balancerMicrosPerAnswer)),
  floodRounds: samples.floodRps,
  acceptRounds: samples.acceptRps,
  ...books,
});

/** The scale-out A/B: one API replica against two, both behind HAProxy, their loads alternated. */
export type ScaleOut = Readonly<{
  rounds: number;
  /** the connection count of every load (the bench's headline count) */
  connections: number;
  secondsPerLoad: number;
  /** worker processes of each side */
  workers: number;
  /** the bench's admission settings, the same on both sides */
  admission: 'on' | 'off';
  /** HAProxy's version line */
  balancer: string;
  redis: string;
  one: ScaleOutSide;
  two: ScaleOutSide;
  /** medians, two replicas / one */
  floodRatio: number;
  acceptRatio: number;
  /**
   * Two API replicas again, their MySQL a Galera cluster of 3 behind a single-writer HAProxy, alternated with
   * the other two sides; or why it did not run
   */
  galera?: ScaleOutSide | Readonly<{ skipped: string }>;
  /** medians, Galera / one MariaDB (both with two replicas) */
  galeraRatios?: Readonly<{ flood: number; accept: number; commit: number }>;
}>;

/** The phase's entry in the results: its figures, or why it did not run. */
export type ScaleOutResult = ScaleOut | Readonly<{ skipped: string }>;
