/**
 * The service scaled out on one machine, no Docker: a Redis Cluster (3 masters, 1 replica each), a 3-broker
 * Apache Kafka cluster (KRaft), MariaDB as it runs, two API processes (`seckill serve`) and two worker processes
 * (`seckill worker`), and HAProxy in front of the APIs (round robin, health-checked on `/readyz`). Every process
 * listens on loopback. `npm run cluster` runs it in the foreground; the scale tests start one per drill and kill
 * its nodes.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { SERVICE_NODE_FLAGS } from '../../src/infrastructure/node-flags.js';
import { freePort, KafkaCluster } from '../kafka/cluster.js';
import { exited, running, waitFor } from './processes.js';
import { RedisCluster, type RedisClusterOptions } from './redis-cluster.js';

const run = promisify(execFile);

export type Say = (line: string) => void;

export type DeploymentOptions = Readonly<{
  apis?: number;
  workers?: number;
  /** the service's database (created and migrated at start); default `mysql://root@127.0.0.1:3306/seckill_cluster` */
  mysqlUrl?: string;
  /** a running Kafka cluster to use (the deployment neither starts nor stops it); default: 3 brokers of its own */
  kafka?: KafkaCluster;
  redis?: RedisClusterOptions;
  /**
   * More settings for every service process (they win over the deployment's). The processes take no other
   * `SECKILL_*` setting: whatever the calling shell exports is left out, so a deployment is the same anywhere.
   */
  env?: Readonly<Record<string, string>>;
  /** the JWT secret of the service; default: a random one */
  secret?: string;
  /** the balancer's port on 127.0.0.1; 0 (default) takes a free one */
  balancerPort?: number;
  /** where the processes' logs and the balancer's configuration go (default .cache/cluster) */
  dir?: string;
  say?: Say;
  /** aborted while starting: what has started is stopped after the step under way, and start() rejects */
  signal?: AbortSignal;
}>;

export type NodeRole = 'api' | 'worker';

/** One process of the service, by name (`api-1`, `worker-2`). */
export type ServiceNode = {
  readonly name: string;
  readonly role: NodeRole;
  /** the API's HTTP port (a worker listens on none) */
  readonly port: number | null;
  /** its metrics listener (SECKILL_METRICS_PORT): /metrics, /healthz and /readyz on 127.0.0.1 */
  readonly metricsPort: number;
  child: ChildProcess;
};

/** This process's environment without the service's settings (`SECKILL_*`, `PORT`). */
const baseEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('SECKILL_') && name !== 'PORT'),
  );

/** The project's root: the folder holding package.json above this file (in scripts/ or dist/scripts/). */
const projectRoot = (): string => {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`package.json not found above ${import.meta.dirname}`);
  }
};

/** how long a service process or the balancer may take to be ready (four processes start on the same cores) */
const STARTUP_MS = 60_000;

const interrupted = (signal: AbortSignal | undefined): void => {
  if (signal?.aborted) throw new Error('interrupted while starting');
};

const okAt = async (url: string): Promise<boolean> =>
  (await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => null))?.ok ?? false;

/**
 * HAProxy in front of the APIs: round robin; a server is taken out after 2 failed `/readyz` checks a second
 * apart and back after 2 good ones; a request whose connection a dead server refuses goes to another
 * (`redispatch`), and so does a read the server died under; any other request already sent is never sent twice
 * (an order is not idempotent: its buyer, cut off, asks for their orders again).
 *
 * When every API fails its check at once, the cause is shared (a Redis master failing over, MySQL away), and
 * taking them all out would answer every buyer 503, reads and all. The APIs are listed a second time as backup
 * servers without a check, all used together (`allbackups`): the balancer then fails open, each API answers
 * what it can, and a dead one's refused connections go to the others.
 */
export const haproxyConfig = (balancerPort: number, apiPorts: readonly number[]): string =>
  [
    '# written by scripts/cluster/deployment.ts',
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  option forwardfor',
    '  option redispatch 1',
    '  retries 2',
    // a read cut off by a dying API is sent again to another; anything else is not (an order may have landed)
    '  retry-on conn-failure empty-response response-timeout',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout http-keep-alive 60s',
    'frontend seckill',
    `  bind 127.0.0.1:${balancerPort}`,
    '  default_backend apis',
    'backend apis',
    '  balance roundrobin',
    '  http-request disable-l7-retry unless METH_GET',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  option allbackups',
    '  default-server inter 1s fall 2 rise 2',
    ...apiPorts.map((port, i) => `  server api-${i + 1} 127.0.0.1:${port} check`),
    ...apiPorts.map((port, i) => `  server api-${i + 1}-open 127.0.0.1:${port} backup`),
    '',
  ].join('\n');

/** Redis Cluster and Kafka, together; when one fails to start, the other is stopped, not left behind. */
const startServers = async (
  options: DeploymentOptions,
  dir: string,
  say: Say,
): Promise<[RedisCluster, KafkaCluster]> => {
  const [redis, kafka] = await Promise.allSettled([
    RedisCluster.start({ nodeTimeoutMs: 2_000, ...options.redis }),
    options.kafka ?? KafkaCluster.start({ brokers: 3, dir: path.join(dir, 'kafka'), say }),
  ]);
  if (redis.status === 'fulfilled' && kafka.status === 'fulfilled') return [redis.value, kafka.value];
  if (redis.status === 'fulfilled') await redis.value.stop();
  if (kafka.status === 'fulfilled' && !options.kafka) await kafka.value.stop();
  throw redis.status === 'rejected' ? redis.reason : (kafka as PromiseRejectedResult).reason;
};

export class Deployment {
  private haproxy: ChildProcess | null = null;

  private constructor(
    readonly url: string,
    readonly secret: string,
    readonly mysqlUrl: string,
    readonly redis: RedisCluster,
    readonly kafka: KafkaCluster,
    private readonly ownsKafka: boolean,
    readonly nodes: ServiceNode[],
    private readonly env: Readonly<Record<string, string>>,
    readonly dir: string,
  ) {}

  static async start(options: DeploymentOptions = {}): Promise<Deployment> {
    const say = options.say ?? ((line: string) => process.stderr.write(`${line}\n`));
    const root = projectRoot();
    const dir = path.resolve(options.dir ?? path.join(root, '.cache', 'cluster'));
    fs.mkdirSync(dir, { recursive: true });
    const mysqlUrl = options.mysqlUrl ?? 'mysql://root@127.0.0.1:3306/seckill_cluster';
    const secret = options.secret ?? randomBytes(24).toString('base64url');
    say(`starting Redis Cluster (3 masters, 1 replica each)${options.kafka ? '' : ' and Kafka (3 brokers)'}`);
    const [redis, kafka] = await startServers(options, dir, say);
    if (options.signal?.aborted) {
      await redis.stop();
      if (!options.kafka) await kafka.stop();
      throw new Error('interrupted while starting');
    }
    const env: Record<string, string> = {
      SECKILL_PROFILE: 'real',
      SECKILL_JWT_SECRET: secret,
      SECKILL_MYSQL_URL: mysqlUrl,
      SECKILL_REDIS_URL: redis.url,
      SECKILL_KAFKA_BROKERS: kafka.brokers,
      SECKILL_HOST: '127.0.0.1',
      // the balancer on loopback is the proxy whose X-Forwarded-For names the buyer
      SECKILL_TRUST_PROXY: 'loopback',
      SECKILL_LOG_LEVEL: 'info',
      SECKILL_DEMO_PRODUCT: 'false',
      ...options.env,
    };
    const apiPorts = await Promise.all(Array.from({ length: options.apis ?? 2 }, freePort));
    const balancerPort = options.balancerPort || (await freePort());
    const deployment = new Deployment(
      `http://127.0.0.1:${balancerPort}`,
      secret,
      mysqlUrl,
      redis,
      kafka,
      options.kafka === undefined,
      await Promise.all(
        [
          ...apiPorts.map((port, i) => ({ name: `api-${i + 1}`, role: 'api' as const, port })),
          ...Array.from({ length: options.workers ?? 2 }, (_, i) => ({
            name: `worker-${i + 1}`,
            role: 'worker' as const,
            port: null,
          })),
        ].map(async (n) => ({ ...n, metricsPort: await freePort(), child: null as unknown as ChildProcess })),
      ),
      env,
      dir,
    );
    try {
      say(`migrating ${mysqlUrl.replace(/\/\/[^@]*@/, '//')}`);
      await run(process.execPath, [path.join(root, 'dist/src/infrastructure/main.js'), 'migrate'], {
        env: { ...baseEnv(), ...env },
        cwd: root,
      });
      interrupted(options.signal);
      say(`starting ${deployment.nodes.map((n) => n.name).join(', ')}`);
      await Promise.all(deployment.nodes.map((node) => deployment.launch(node)));
      interrupted(options.signal);
      await deployment.startBalancer(balancerPort, apiPorts);
    } catch (error) {
      await deployment.stop();
      throw error;
    }
    return deployment;
  }

  node(name: string): ServiceNode {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name} (nodes: ${this.nodes.map((n) => n.name).join(', ')})`);
    return node;
  }

  get balancerPid(): number | null {
    return this.haproxy?.pid ?? null;
  }

  /**
   * Starts a node's process and resolves once it is ready: its `/readyz` answers 200 (an API's on its port, the
   * balancer's check; a worker's on its metrics listener), whatever it logs.
   */
  private async launch(node: ServiceNode): Promise<void> {
    const root = projectRoot();
    const log = fs.createWriteStream(path.join(this.dir, `${node.name}.log`), { flags: 'a' });
    const child = spawn(
      process.execPath,
      [...SERVICE_NODE_FLAGS, 'dist/src/infrastructure/main.js', node.role === 'api' ? 'serve' : 'worker'],
      {
        cwd: root,
        env: {
          ...baseEnv(),
          ...this.env,
          SECKILL_METRICS_PORT: String(node.metricsPort),
          ...(node.port === null ? {} : { PORT: String(node.port) }),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    node.child = child;
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once('exit', () => setTimeout(() => log.end(), 100));
    const readyz = `http://127.0.0.1:${node.port ?? node.metricsPort}/readyz`;
    await waitFor(
      `${node.name} ready`,
      () => {
        if (!running(child)) throw new Error(`${node.name} exited (${child.exitCode ?? child.signalCode})`);
        return okAt(readyz);
      },
      STARTUP_MS,
    );
  }

  apiUrl(node: ServiceNode): string {
    if (node.port === null) throw new Error(`${node.name} serves no HTTP`);
    return `http://127.0.0.1:${node.port}`;
  }

  private async startBalancer(port: number, apiPorts: readonly number[]): Promise<void> {
    const config = path.join(this.dir, 'haproxy.cfg');
    fs.writeFileSync(config, haproxyConfig(port, apiPorts));
    const log = fs.createWriteStream(path.join(this.dir, 'haproxy.log'), { flags: 'a' });
    const haproxy = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy.stdout.pipe(log);
    haproxy.stderr.pipe(log);
    haproxy.once('error', () => undefined);
    this.haproxy = haproxy;
    await waitFor(
      'HAProxy routing to the APIs',
      () => {
        if (!running(haproxy))
          throw new Error(
            `haproxy exited (${haproxy.exitCode ?? haproxy.signalCode}); is it installed (apt-get install haproxy)? ` +
              `Its log: ${path.join(this.dir, 'haproxy.log')}`,
          );
        return okAt(`${this.url}/readyz`);
      },
      STARTUP_MS,
    );
  }

  /** SIGKILLs a node of the service: no clean shutdown, requests in flight are cut. */
  async kill(name: string): Promise<void> {
    const { child } = this.node(name);
    const done = exited(child);
    child.kill('SIGKILL');
    await done;
  }

  /** Starts a killed node again (an API on its old port, so the balancer takes it back). */
  async restart(name: string): Promise<void> {
    const node = this.node(name);
    if (running(node.child)) throw new Error(`${name} is still running`);
    await this.launch(node);
  }

  /** The PIDs of every process, by name. */
  pids(): Record<string, number | null> {
    const pids: Record<string, number | null> = {};
    for (const node of this.nodes) pids[node.name] = running(node.child) ? (node.child.pid ?? null) : null;
    pids['haproxy'] = this.balancerPid;
    for (const port of this.redis.ports) pids[`redis-${port}`] = this.redis.pidOf(port);
    for (const broker of this.kafka.nodes) pids[`kafka-${broker.id}`] = this.kafka.pidOf(broker.id);
    return pids;
  }

  /** Stops every process: the service's first (SIGTERM: they finish what they hold), then the servers. */
  async stop(): Promise<void> {
    await Promise.all(
      this.nodes
        .filter((n) => n.child && running(n.child))
        .map(async (n) => {
          const done = exited(n.child);
          n.child.kill('SIGTERM');
          const timer = setTimeout(() => n.child.kill('SIGKILL'), 20_000);
          await done;
          clearTimeout(timer);
        }),
    );
    if (this.haproxy && running(this.haproxy)) {
      const done = exited(this.haproxy);
      this.haproxy.kill('SIGTERM');
      await done;
    }
    await this.redis.stop();
    if (this.ownsKafka) await this.kafka.stop();
  }
}
