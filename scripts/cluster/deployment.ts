/**
 * The service scaled out on one machine, no Docker: a Redis Cluster (3 masters, 1 replica each), a 3-broker
 * Apache Kafka cluster (KRaft), a 3-node MariaDB Galera Cluster behind its own HAProxy (one writer at a time;
 * or a MySQL server given by URL), two API processes (`seckill serve`) and two worker processes
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
import { ZipkinServer } from '../zipkin/server.js';
import { exited, projectRoot, running, signalled, startHaproxy, stderrTail, waitFor } from './processes.js';
import { GaleraCluster } from './galera-cluster.js';
import { RedisCluster, type RedisClusterOptions } from './redis-cluster.js';

const run = promisify(execFile);

export type Say = (line: string) => void;

export type DeploymentOptions = Readonly<{
  apis?: number;
  workers?: number;
  /**
   * the service's database on a MySQL server of the caller's (created and migrated at start); default: the
   * database `seckill_cluster` on a Galera cluster of the deployment's own (or on `galera`)
   */
  mysqlUrl?: string;
  /** a running Galera cluster to use (the deployment neither starts nor stops it), its database `database` */
  galera?: GaleraCluster;
  /** the database on the Galera cluster (default `seckill_cluster`) */
  database?: string;
  /** a running Kafka cluster to use (the deployment neither starts nor stops it); default: 3 brokers of its own */
  kafka?: KafkaCluster;
  redis?: RedisClusterOptions;
  /**
   * a Zipkin server of the deployment's own, every process tracing to it (SECKILL_OTEL_ZIPKIN_URL; 10 % of new
   * traces unless SECKILL_OTEL_SAMPLE_RATIO says otherwise); default: none, tracing off
   */
  zipkin?: boolean;
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

/**
 * This process's environment without the service's settings (`SECKILL_*`, `PORT`) and OpenTelemetry's
 * (`OTEL_*`): the deployment traces to its own Zipkin or not at all, never where a shell's variable points.
 */
const baseEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('SECKILL_') && !name.startsWith('OTEL_') && name !== 'PORT',
    ),
  );

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
 * (`redispatch`). A request already sent is sent again to another API when its server died under it (the
 * connection cut, no answer) or answered 502/503 - but only a read, or an order (`POST /api/v1/seckill/orders`)
 * that carries an `Idempotency-Key`: the service answers a repeat of a keyed order with the order the key made, so the buyer
 * gets one order whichever API answers. A POST without a key is never sent twice (an order may have landed).
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
    // a request cut off by a dying API, or turned away by one, goes to another (which requests: below)
    '  retry-on conn-failure empty-response response-timeout 502 503',
    // a request is sent again from the balancer's copy: the whole of it is read first (orders are small)
    '  option http-buffer-request',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout http-keep-alive 60s',
    'frontend seckill',
    `  bind 127.0.0.1:${balancerPort}`,
    '  default_backend apis',
    'backend apis',
    '  balance roundrobin',
    // only the order route honours a key: a keyed POST elsewhere (a restock, a payment) is never sent twice
    '  http-request disable-l7-retry unless METH_GET || { path /api/v1/seckill/orders } { req.hdr(idempotency-key) -m found }',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  option allbackups',
    '  default-server inter 1s fall 2 rise 2',
    ...apiPorts.map((port, i) => `  server api-${i + 1} 127.0.0.1:${port} check`),
    ...apiPorts.map((port, i) => `  server api-${i + 1}-open 127.0.0.1:${port} backup`),
    '',
  ].join('\n');

type Servers = Readonly<{
  redis: RedisCluster;
  kafka: KafkaCluster;
  galera: GaleraCluster | null;
  zipkin: ZipkinServer | null;
}>;

/**
 * Redis Cluster, Kafka and (unless MySQL is given) Galera, together; when one fails to start, the others are
 * stopped, not left behind.
 */
const startServers = async (options: DeploymentOptions, dir: string, say: Say): Promise<Servers> => {
  const ownGalera = options.mysqlUrl === undefined && options.galera === undefined;
  const ownKafka = options.kafka === undefined;
  say(
    `starting Redis Cluster (3 masters, 1 replica each)${ownKafka ? ', Kafka (3 brokers)' : ''}${ownGalera ? ', MariaDB Galera Cluster (3 nodes)' : ''}${options.zipkin ? ', Zipkin' : ''}`,
  );
  const started: Array<{ stop(): Promise<void> }> = [];
  const kept = <T extends { stop(): Promise<void> }>(server: T, own = true): T => {
    if (own) started.push(server);
    return server;
  };
  const [redis, kafka, galera, zipkin] = await Promise.allSettled([
    RedisCluster.start({ nodeTimeoutMs: 2_000, ...options.redis }).then((r) => kept(r)),
    options.kafka ??
      KafkaCluster.start({ brokers: 3, dir: path.join(dir, 'kafka'), say }).then((k) => kept(k)),
    ownGalera ? GaleraCluster.start({ say }).then((g) => kept(g)) : Promise.resolve(options.galera ?? null),
    options.zipkin
      ? ZipkinServer.start({ dir: path.join(dir, 'zipkin'), say }).then((z) => kept(z))
      : Promise.resolve(null),
  ]);
  const failed = [redis, kafka, galera, zipkin].find((r) => r.status === 'rejected');
  if (!failed && !options.signal?.aborted)
    return {
      redis: (redis as PromiseFulfilledResult<RedisCluster>).value,
      kafka: (kafka as PromiseFulfilledResult<KafkaCluster>).value,
      galera: (galera as PromiseFulfilledResult<GaleraCluster | null>).value,
      zipkin: (zipkin as PromiseFulfilledResult<ZipkinServer | null>).value,
    };
  for (const server of started) await server.stop();
  throw failed ? failed.reason : new Error('interrupted while starting');
};

/** Every service process's settings: the servers', then the caller's (which win). */
const serviceEnv = (
  secret: string,
  mysqlUrl: string,
  { redis, kafka, zipkin }: Servers,
  given: Readonly<Record<string, string>> = {},
): Record<string, string> => ({
  ...(zipkin ? { SECKILL_OTEL_ZIPKIN_URL: zipkin.spansUrl, SECKILL_OTEL_SAMPLE_RATIO: '0.1' } : {}),
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
  ...given,
});

export class Deployment {
  private haproxy: ChildProcess | null = null;
  /** the Zipkin server every process traces to (null: tracing off) */
  zipkin: ZipkinServer | null = null;

  private constructor(
    readonly url: string,
    readonly secret: string,
    readonly mysqlUrl: string,
    readonly redis: RedisCluster,
    readonly kafka: KafkaCluster,
    private readonly ownsKafka: boolean,
    /** the Galera cluster the service's MySQL is on (null: a server given by URL) */
    readonly galera: GaleraCluster | null,
    private readonly ownsGalera: boolean,
    readonly nodes: ServiceNode[],
    private readonly env: Readonly<Record<string, string>>,
    readonly dir: string,
  ) {}

  static async start(options: DeploymentOptions = {}): Promise<Deployment> {
    const say = options.say ?? ((line: string) => process.stderr.write(`${line}\n`));
    const root = projectRoot();
    const dir = path.resolve(options.dir ?? path.join(root, '.cache', 'cluster'));
    fs.mkdirSync(dir, { recursive: true });
    const secret = options.secret ?? randomBytes(24).toString('base64url');
    const servers = await startServers(options, dir, say);
    const { redis, kafka, galera } = servers;
    const ownsGalera = options.galera === undefined && galera !== null;
    const mysqlUrl = options.mysqlUrl ?? `${galera!.url}/${options.database ?? 'seckill_cluster'}`;
    const env = serviceEnv(secret, mysqlUrl, servers, options.env);
    const apiPorts = await Promise.all(Array.from({ length: options.apis ?? 2 }, freePort));
    const balancerPort = options.balancerPort || (await freePort());
    const deployment = new Deployment(
      `http://127.0.0.1:${balancerPort}`,
      secret,
      mysqlUrl,
      redis,
      kafka,
      options.kafka === undefined,
      galera,
      ownsGalera,
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
    deployment.zipkin = servers.zipkin;
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
    const said = stderrTail(child);
    const readyz = `http://127.0.0.1:${node.port ?? node.metricsPort}/readyz`;
    await waitFor(`${node.name} ready`, () => !running(child) || okAt(readyz), STARTUP_MS);
    if (running(child)) return;
    const code = child.exitCode ?? child.signalCode;
    throw new Error(
      `${node.name} exited (${code}) before it was ready; its stderr ended with:\n${await said()}`,
    );
  }

  apiUrl(node: ServiceNode): string {
    if (node.port === null) throw new Error(`${node.name} serves no HTTP`);
    return `http://127.0.0.1:${node.port}`;
  }

  private async startBalancer(port: number, apiPorts: readonly number[]): Promise<void> {
    this.haproxy = await startHaproxy({
      dir: this.dir,
      name: 'haproxy',
      config: haproxyConfig(port, apiPorts),
      what: 'HAProxy routing to the APIs',
      ready: () => okAt(`${this.url}/readyz`),
    });
  }

  /** SIGKILLs a node of the service: no clean shutdown, requests in flight are cut. */
  async kill(name: string): Promise<void> {
    await signalled(this.node(name).child, 'SIGKILL');
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
    if (this.galera) {
      for (const node of this.galera.nodes) pids[node.name] = this.galera.pidOf(node.name);
      pids['haproxy-galera'] = this.galera.balancerPid;
    }
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
    if (this.ownsGalera) await this.galera?.stop();
    await this.zipkin?.stop();
  }
}
