/**
 * A local Apache Kafka cluster in KRaft mode, no Docker: Kafka's own broker (`org.apache.kafka:kafka_2.13`)
 * is fetched from Maven Central once into `.cache/kafka/<version>/libs`, and 1 or 3 combined
 * controller+broker JVMs are started on loopback. The tests (jest's global setup), CI and the bench use it;
 * `scripts/kafka-cluster` (a shell wrapper) runs it:
 *
 *   scripts/kafka-cluster [run]  [--brokers 1|3] [--port 9092] [--dir DIR] [--version V]   foreground, Ctrl-C stops
 *   scripts/kafka-cluster start  [same options]                                             detached, prints the bootstrap list
 *   scripts/kafka-cluster stop   [--dir DIR]
 *   scripts/kafka-cluster status [--dir DIR]
 *   scripts/kafka-cluster fetch  [--version V]                                              prints the libs folder
 *
 * Each node's process, ports and command line are kept in `<dir>/cluster.json`, so another process (a test
 * file, the bench) can attach to a running cluster and SIGKILL, freeze, thaw or restart one node.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { alive, commandLine, javaBin } from '../cluster/processes.js';

const run = promisify(execFile);

export const DEFAULT_KAFKA_VERSION = '4.1.1';

/**
 * JVM options of a node, after its heap size. Measured on this 2-core machine, 3 nodes taking 2,000
 * idempotent `acks: -1` messages a second: with the JVM's defaults (G1, C2) the nodes use 1.6 cores for their
 * first minute, most of it C2 compiling Kafka's hot paths, and 0.7 once warm; C1 only and the serial
 * collector, 0.75 from the start. A local cluster lives for a test run or a bench, beside the service on the
 * same cores, so it takes the latter. (A production broker on its own host keeps the JVM's defaults.)
 */
const DEFAULT_JVM = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

/** The project's root: the folder holding scripts/kafka/pom.xml (this file runs from scripts/kafka/ or dist/scripts/kafka/). */
const projectRoot = (): string => {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'scripts', 'kafka', 'pom.xml'))) return dir;
    if (path.dirname(dir) === dir)
      throw new Error('scripts/kafka/pom.xml not found above ' + import.meta.dirname);
  }
};

export const kafkaCacheDir = (): string =>
  process.env['SECKILL_KAFKA_CACHE'] ?? path.join(projectRoot(), '.cache', 'kafka');

/** `java -version`'s first line, or null when there is no Java. */
export const javaVersion = async (): Promise<string | null> => {
  try {
    const { stderr } = await run(javaBin(), ['-version']);
    return stderr.split('\n')[0]?.trim() ?? 'java';
  } catch {
    return null;
  }
};

type Say = (line: string) => void;
const toStderr: Say = (line) => process.stderr.write(`kafka-cluster: ${line}\n`);

/**
 * The broker's jars for `version`, fetched with Maven the first time (later calls reuse the cache). Returns
 * the libs folder.
 */
export const fetchKafka = async (version = DEFAULT_KAFKA_VERSION, say: Say = toStderr): Promise<string> => {
  const home = path.join(kafkaCacheDir(), version);
  const libs = path.join(home, 'libs');
  if (fs.existsSync(path.join(home, 'complete'))) return libs;
  say(`fetching Apache Kafka ${version} (org.apache.kafka:kafka_2.13) from Maven Central into ${home}`);
  const partial = `${libs}.partial`;
  fs.rmSync(partial, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  try {
    await run(
      'mvn',
      [
        '-B',
        '-q',
        '-f',
        path.join(projectRoot(), 'scripts', 'kafka', 'pom.xml'),
        'dependency:copy-dependencies',
        `-Dkafka.version=${version}`,
        '-DincludeScope=runtime',
        `-DoutputDirectory=${partial}`,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`mvn could not fetch Apache Kafka ${version}:\n${stdout}${stderr}`.trim(), {
      cause: error,
    });
  }
  fs.rmSync(libs, { recursive: true, force: true });
  fs.renameSync(partial, libs);
  fs.writeFileSync(path.join(home, 'complete'), `${new Date().toISOString()}\n`);
  say(`Apache Kafka ${version}: ${fs.readdirSync(libs).length} jars in ${libs}`);
  return libs;
};

export type KafkaNode = Readonly<{
  id: number;
  port: number;
  controllerPort: number;
  dir: string;
}>;

type NodeState = KafkaNode & { pid: number; args: string[] };

type ClusterState = {
  version: string;
  clusterId: string;
  brokers: string;
  java: string;
  nodes: NodeState[];
};

export type KafkaClusterOptions = Readonly<{
  /** 1 or 3 combined controller+broker nodes (default 3) */
  brokers?: number;
  /** where the nodes keep their data and logs; emptied at start (default .cache/kafka/cluster) */
  dir?: string;
  /** node i listens on port + 2i and its controller on port + 2i + 1; 0 (default) takes free ports */
  port?: number;
  version?: string;
  /** heap of each node (default 512 MiB: three nodes fit this machine's memory many times over) */
  heapMb?: number;
  /** gives up waiting for the cluster to answer after this (default 120 s) */
  readyTimeoutMs?: number;
  say?: Say;
}>;

/** A port free on 127.0.0.1 now. */
const unusedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });

/** every port this process has handed out: the system may offer a port again once its probe has closed */
const handedOut = new Set<number>();

/**
 * A port nothing listens on, never one this process handed out before: ports taken for several processes at
 * once (a cluster's nodes) are told apart although each is bound only later, by its own process.
 */
export const freePort = async (): Promise<number> => {
  for (;;) {
    const port = await unusedPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
};

/**
 * Kafka's Uuid text form: 16 random bytes, base64url without padding. One that starts with `-` would be read
 * as an option by the storage tool's command line, so such a draw is made again.
 */
const clusterUuid = (): string => {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
};

const serverProperties = (node: KafkaNode, voters: string, size: number): string =>
  [
    '# written by scripts/kafka-cluster',
    'process.roles=broker,controller',
    `node.id=${node.id}`,
    `controller.quorum.voters=${voters}`,
    `listeners=PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${node.port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${path.join(node.dir, 'data')}`,
    // what a production cluster of this size would use: every write on 2 of 3 replicas at least
    'num.partitions=4',
    `default.replication.factor=${Math.min(3, size)}`,
    `min.insync.replicas=${Math.min(2, size)}`,
    `offsets.topic.replication.factor=${Math.min(3, size)}`,
    'offsets.topic.num.partitions=6',
    `transaction.state.log.replication.factor=${Math.min(3, size)}`,
    `transaction.state.log.min.isr=${Math.min(2, size)}`,
    'auto.create.topics.enable=true',
    'group.initial.rebalance.delay.ms=0',
    // a killed or frozen node is fenced (and loses its leaderships) in seconds, not half a minute
    'broker.session.timeout.ms=4000',
    'broker.heartbeat.interval.ms=1000',
    'replica.lag.time.max.ms=10000',
    // many small test topics: small segment indexes keep the nodes' memory maps few
    'log.segment.bytes=67108864',
    'log.index.size.max.bytes=1048576',
    'num.network.threads=2',
    'num.io.threads=4',
    '',
  ].join('\n');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const waitUntil = async (what: string, timeoutMs: number, check: () => Promise<boolean> | boolean) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(200);
  }
};

const spawnNode = (state: ClusterState, node: NodeState): number => {
  const out = fs.openSync(path.join(node.dir, 'stdout.log'), 'a');
  const child: ChildProcess = spawn(state.java, node.args, { detached: true, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  child.unref();
  if (child.pid === undefined) throw new Error(`cannot start Kafka node ${node.id} (${state.java})`);
  return child.pid;
};

/** Ids, ports and folders of the nodes: node i on base + 2i (controller base + 2i + 1), or free ports for 0. */
const planNodes = async (dir: string, size: number, base: number): Promise<NodeState[]> => {
  const nodes: NodeState[] = [];
  for (let i = 0; i < size; i++) {
    const id = i + 1;
    nodes.push({
      id,
      port: base ? base + 2 * i : await freePort(),
      controllerPort: base ? base + 2 * i + 1 : await freePort(),
      dir: path.join(dir, `node-${id}`),
      pid: 0,
      args: [],
    });
  }
  return nodes;
};

/** Writes a node's server.properties, formats its KRaft storage, and sets the command line that starts it. */
const formatNode = async (
  node: NodeState,
  cluster: Readonly<{
    java: string;
    libs: string;
    clusterId: string;
    nodes: readonly NodeState[];
    heapMb: number;
  }>,
): Promise<void> => {
  const voters = cluster.nodes.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');
  fs.mkdirSync(node.dir, { recursive: true });
  const properties = path.join(node.dir, 'server.properties');
  fs.writeFileSync(properties, serverProperties(node, voters, cluster.nodes.length));
  const jvm = [
    `-Dlog4j2.configurationFile=${path.join(projectRoot(), 'scripts', 'kafka', 'log4j2.properties')}`,
    `-Dkafka.logs.dir=${node.dir}`,
    '-Djava.awt.headless=true',
    '-cp',
    path.join(cluster.libs, '*'),
  ];
  await run(cluster.java, [
    '-Xmx128m',
    ...jvm,
    'kafka.tools.StorageTool',
    'format',
    '-t',
    cluster.clusterId,
    '-c',
    properties,
  ]);
  node.args = [
    `-Xms${cluster.heapMb}m`,
    `-Xmx${cluster.heapMb}m`,
    ...DEFAULT_JVM,
    '-XX:+ExitOnOutOfMemoryError',
    ...jvm,
    'kafka.Kafka',
    properties,
  ];
};

const stateFile = (dir: string) => path.join(dir, 'cluster.json');

const tail = (file: string, lines = 30): string => {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
};

/** A running cluster: its bootstrap list, and control over each node's process. */
export class KafkaCluster {
  /** nodes this process has frozen: an admin client of the drill must not wait on them */
  private readonly frozen = new Set<number>();

  private constructor(
    readonly dir: string,
    private state: ClusterState,
  ) {}

  get version(): string {
    return this.state.version;
  }
  get brokers(): string {
    return this.state.brokers;
  }
  get nodes(): readonly KafkaNode[] {
    return this.state.nodes;
  }
  /** "Apache Kafka 4.1.1, 3 brokers (KRaft)" */
  get description(): string {
    const n = this.state.nodes.length;
    return `Apache Kafka ${this.state.version}, ${n} broker${n === 1 ? '' : 's'} (KRaft)`;
  }

  pidOf(id: number): number {
    return this.node(id).pid;
  }

  /** A cluster another process started in `dir`. */
  static attach(dir: string): KafkaCluster {
    const state = JSON.parse(fs.readFileSync(stateFile(dir), 'utf8')) as ClusterState;
    return new KafkaCluster(dir, state);
  }

  static async start(options: KafkaClusterOptions = {}): Promise<KafkaCluster> {
    const say = options.say ?? toStderr;
    const size = options.brokers ?? 3;
    if (size !== 1 && size !== 3) throw new Error(`--brokers must be 1 or 3, not ${size}`);
    const version = options.version ?? DEFAULT_KAFKA_VERSION;
    const dir = path.resolve(options.dir ?? path.join(kafkaCacheDir(), 'cluster'));
    if (fs.existsSync(stateFile(dir))) await KafkaCluster.attach(dir).stop();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const java = javaBin();
    if ((await javaVersion()) === null)
      throw new Error(`no Java found (${java}): Kafka ${version} needs Java 17`);
    const libs = await fetchKafka(version, say);

    const nodes = await planNodes(dir, size, options.port ?? 0);
    const clusterId = clusterUuid();
    await Promise.all(
      nodes.map((node) =>
        formatNode(node, {
          java,
          libs,
          clusterId,
          nodes,
          heapMb: options.heapMb ?? 512,
        }),
      ),
    );
    const state: ClusterState = {
      version,
      clusterId,
      java,
      brokers: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
      nodes,
    };
    for (const node of nodes) node.pid = spawnNode(state, node);
    const cluster = new KafkaCluster(dir, state);
    cluster.save();
    say(`starting ${cluster.description} at ${state.brokers} (data and logs in ${dir})`);
    try {
      await cluster.ready(options.readyTimeoutMs ?? 120_000);
    } catch (error) {
      const logs = nodes.map((n) => `--- node ${n.id}\n${tail(path.join(n.dir, 'server.log'))}`).join('\n');
      await cluster.stop();
      throw new Error(`${String(error)}\n${logs}`, { cause: error });
    }
    return cluster;
  }

  private save(): void {
    fs.writeFileSync(stateFile(this.dir), `${JSON.stringify(this.state, null, 2)}\n`);
  }

  private node(id: number): NodeState {
    const node = this.state.nodes.find((n) => n.id === id);
    if (!node)
      throw new Error(`no Kafka node ${id} (nodes: ${this.state.nodes.map((n) => n.id).join(', ')})`);
    return node;
  }

  /** An admin client of this cluster; the caller disconnects it. */
  async admin(): Promise<Admin> {
    // only nodes that answer: a frozen node takes connections (the kernel does) and never replies
    const answering = this.state.nodes.filter((n) => alive(n.pid) && !this.frozen.has(n.id));
    const kafka = new Kafka({
      clientId: 'kafka-cluster',
      brokers: answering.map((n) => `127.0.0.1:${n.port}`),
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1_000,
      requestTimeout: 5_000,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 },
    });
    const admin = kafka.admin();
    await admin.connect();
    return admin;
  }

  private async withAdmin<T>(use: (admin: Admin) => Promise<T>): Promise<T> {
    const admin = await this.admin();
    try {
      return await use(admin);
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Resolves when every running node is in the cluster's metadata and a consumer group's coordinator
   * answers (that also creates the offsets topic, so the first test does not pay for it).
   */
  async ready(timeoutMs = 120_000): Promise<void> {
    const expected = this.state.nodes.filter((n) => alive(n.pid)).length;
    await waitUntil(`${this.description} answering metadata`, timeoutMs, async () => {
      for (const node of this.state.nodes)
        if (!alive(node.pid))
          throw new Error(`Kafka node ${node.id} exited:\n${tail(path.join(node.dir, 'server.log'))}`);
      try {
        return await this.withAdmin(async (admin) => {
          const { brokers } = await admin.describeCluster();
          if (brokers.length < expected) return false;
          await admin.describeGroups(['kafka-cluster-ready']);
          return true;
        });
      } catch {
        return false;
      }
    });
  }

  /** Resolves when every partition of every topic has all its replicas in sync (after a node came back). */
  async inSync(timeoutMs = 60_000): Promise<void> {
    await waitUntil('every replica back in sync', timeoutMs, async () => {
      try {
        return await this.withAdmin(async (admin) => {
          const { topics } = await admin.fetchTopicMetadata();
          return topics.every((t) => t.partitions.every((p) => p.isr.length === p.replicas.length));
        });
      } catch {
        return false;
      }
    });
  }

  /** The node leading `partition` of `topic`. */
  leaderOf(topic: string, partition = 0): Promise<number> {
    return this.withAdmin(async (admin) => {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const leader = topics[0]?.partitions.find((p) => p.partitionId === partition)?.leader;
      if (leader === undefined || leader < 0) throw new Error(`${topic}[${partition}] has no leader`);
      return leader;
    });
  }

  /** Sends `signal` to a node (SIGKILL waits until the process is gone). */
  async signal(id: number, signal: NodeJS.Signals): Promise<void> {
    const { pid } = this.node(id);
    if (!alive(pid)) return;
    process.kill(pid, signal);
    if (signal === 'SIGKILL') await waitUntil(`Kafka node ${id} gone`, 10_000, () => !alive(pid));
  }

  kill(id: number): Promise<void> {
    return this.signal(id, 'SIGKILL');
  }
  async freeze(id: number): Promise<void> {
    await this.signal(id, 'SIGSTOP');
    this.frozen.add(id);
  }
  async thaw(id: number): Promise<void> {
    await this.signal(id, 'SIGCONT');
    this.frozen.delete(id);
  }

  /** Starts a node that was killed again, on its old data, and waits until the cluster has it back. */
  async restart(id: number, timeoutMs = 60_000): Promise<void> {
    const node = this.node(id);
    if (alive(node.pid)) throw new Error(`Kafka node ${id} is still running (pid ${node.pid})`);
    node.pid = spawnNode(this.state, node);
    this.save();
    await this.ready(timeoutMs);
  }

  /** Stops every node (SIGTERM, then SIGKILL after `graceMs`) and keeps the data folder. */
  async stop(graceMs = 15_000): Promise<void> {
    const pids = this.state.nodes.map((n) => n.pid).filter((pid) => pid > 0 && alive(pid));
    for (const pid of pids) {
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGTERM');
    }
    const deadline = Date.now() + graceMs;
    while (pids.some(alive) && Date.now() < deadline) await sleep(100);
    for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
    while (pids.some(alive)) await sleep(50);
  }

  /** Kills every node (its data is thrown away: no need for a controlled shutdown) and removes the data. */
  async destroy(): Promise<void> {
    await this.stop(0);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

type Cli = { command: string; brokers: number; port: number; dir: string | undefined; version: string };

const parseCli = (argv: readonly string[]): Cli => {
  const defaults: Cli = {
    command: 'run',
    brokers: 3,
    port: 9092,
    dir: undefined,
    version: DEFAULT_KAFKA_VERSION,
  };
  const { command, values } = commandLine(argv, ['brokers', 'port', 'dir', 'version'], defaults.command);
  return {
    command,
    brokers: values.brokers === undefined ? defaults.brokers : Number(values.brokers),
    port: values.port === undefined ? defaults.port : Number(values.port),
    dir: values.dir,
    version: values.version ?? defaults.version,
  };
};

const main = async (argv: readonly string[]): Promise<void> => {
  const cli = parseCli(argv);
  const dir = path.resolve(cli.dir ?? path.join(kafkaCacheDir(), 'local'));
  const options = { brokers: cli.brokers, port: cli.port, dir, version: cli.version };
  const started = (cluster: KafkaCluster) => {
    toStderr(`${cluster.description} is up; pids ${cluster.nodes.map((n) => cluster.pidOf(n.id)).join(' ')}`);
    const replication = Math.min(3, cluster.nodes.length);
    toStderr(
      `export SECKILL_KAFKA_BROKERS=${cluster.brokers}` +
        (replication < 3
          ? ` SECKILL_KAFKA_REPLICATION=${replication} SECKILL_KAFKA_MIN_INSYNC_REPLICAS=1`
          : ''),
    );
    process.stdout.write(`${cluster.brokers}\n`);
  };
  // Ctrl-C while the nodes start: stop the ones already running instead of leaving them behind
  const starting = async (): Promise<KafkaCluster> => {
    const abort = () => {
      const stopping = fs.existsSync(stateFile(dir))
        ? KafkaCluster.attach(dir).stop(5_000)
        : Promise.resolve();
      void stopping.finally(() => process.exit(130));
    };
    process.once('SIGINT', abort);
    process.once('SIGTERM', abort);
    try {
      return await KafkaCluster.start(options);
    } finally {
      process.off('SIGINT', abort);
      process.off('SIGTERM', abort);
    }
  };
  switch (cli.command) {
    case 'fetch':
      process.stdout.write(`${await fetchKafka(cli.version)}\n`);
      return;
    case 'start':
      started(await starting());
      return;
    case 'stop':
      if (!fs.existsSync(stateFile(dir))) return toStderr(`no cluster in ${dir}`);
      await KafkaCluster.attach(dir).stop();
      toStderr(`stopped the cluster in ${dir}`);
      return;
    case 'status': {
      const cluster = KafkaCluster.attach(dir);
      for (const node of cluster.nodes) {
        const pid = cluster.pidOf(node.id);
        toStderr(
          `node ${node.id}: 127.0.0.1:${node.port} pid ${pid} ${alive(pid) ? 'running' : 'not running'}`,
        );
      }
      process.stdout.write(`${cluster.brokers}\n`);
      return;
    }
    case 'run': {
      const cluster = await starting();
      started(cluster);
      toStderr('Ctrl-C stops it');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await cluster.stop();
      toStderr('stopped');
      return;
    }
    default:
      throw new Error(`unknown command ${cli.command} (run, start, stop, status, fetch)`);
  }
};

if (process.argv[1]?.endsWith(path.join('kafka', 'cluster.js')) ?? false) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    toStderr(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
