// One file, one lifecycle: the nodes, their rejoin and the balancer that knows their state start and stop together.
/**
 * MySQL with no single point of failure, on one machine: a MariaDB Galera Cluster of three nodes on loopback
 * (Debian's `mariadb-server` and `galera-4`), and HAProxy in front of it in single-writer mode. The first node
 * starts a new cluster; the others join it by a full copy (SST, rsync); a node that was killed comes back by
 * the writes it missed alone (IST, from the others' write-set cache). The service reaches MySQL through the
 * balancer only: one node takes every connection, the others stand by, and a node counts as up only while it is
 * synced and in the primary component (scripts/cluster/galera-check), not merely while its port is open.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  consecutiveFreePorts,
  exited,
  projectRoot,
  running,
  signalled,
  startHaproxy,
  waitFor,
} from './processes.js';

const run = promisify(execFile);

export type GaleraClusterOptions = Readonly<{
  /** where the nodes keep their data and logs (default: a fresh temporary folder, removed at stop) */
  dir?: string;
  say?: (line: string) => void;
}>;

/** One node: its name (`galera-1`), its SQL port and the ports of Galera's replication, IST and SST. */
export type GaleraNode = Readonly<{
  name: string;
  port: number;
  gcommPort: number;
  istPort: number;
  sstPort: number;
  datadir: string;
}>;

/** A node's replication state, as it says it. */
export type GaleraNodeState = Readonly<{
  /** Synced, Joiner, Donor/Desynced, Joined… */
  state: string;
  /** Primary, or non-Primary when it is cut off from a majority */
  component: string;
  /** how many nodes its component holds */
  size: number;
}>;

const NODES = 3;
/** each node's ports: SQL, replication, IST and SST */
const PORTS_PER_NODE = 4;

/**
 * `count` consecutive free ports below Linux's ephemeral range (32768 and up), where no client socket of this
 * machine takes one of them between the check and the node's start.
 */
const freePorts = (count: number): Promise<number[]> =>
  consecutiveFreePorts('a Galera cluster', { count, lowest: 11_000, span: 8_000 });

/**
 * Galera's failure detection, shortened from its defaults (a node suspected after 5 s, evicted after 15 s) so
 * that a killed writer's peers form a new primary component within seconds: the cluster stalls writes until
 * they have.
 */
const PROVIDER_TIMEOUTS = [
  'evs.keepalive_period=PT0.5S',
  'evs.inactive_check_period=PT0.5S',
  'evs.suspect_timeout=PT2S',
  'evs.inactive_timeout=PT4S',
  'evs.install_timeout=PT3S',
];

/** The SQL of one node, as root over TCP. */
const sql = async (port: number, statement: string): Promise<string> =>
  (
    await run(
      'mariadb',
      [
        '--no-defaults',
        '--protocol=tcp',
        '-h',
        '127.0.0.1',
        '-P',
        String(port),
        '-uroot',
        '-N',
        '-B',
        '-e',
        statement,
      ],
      { timeout: 5_000 },
    )
  ).stdout;

/** The balancer's configuration: TCP, one writer at a time, Galera-aware checks. */
export const galeraBalancerConfig = (
  port: number,
  nodes: readonly GaleraNode[],
  check: string,
  statsSocket: string,
): string =>
  [
    '# written by scripts/cluster/galera-cluster.ts',
    'global',
    '  maxconn 4096',
    // what the balancer thinks of each node: `echo "show stat" | socat - UNIX-CONNECT:<socket>`
    `  stats socket ${statsSocket} mode 600 level user`,
    // the Galera-aware check is a program HAProxy runs: both lines allow it
    '  external-check',
    '  insecure-fork-wanted',
    'defaults',
    '  mode tcp',
    '  timeout connect 1s',
    // the service's pools keep their connections open between queries
    '  timeout client 1h',
    '  timeout server 1h',
    '  timeout check 2s',
    'listen galera',
    `  bind 127.0.0.1:${port}`,
    // a connection the writer refuses (killed, not yet marked down) goes to the next node at once
    '  retries 2',
    '  option redispatch 1',
    '  option external-check',
    '  external-check path "/usr/bin:/bin"',
    `  external-check command ${check}`,
    // a node marked down has its connections cut: no transaction lingers on a node outside the primary component
    '  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions',
    // one writer: every connection goes to the node the table names, and the table names a node until it goes
    // down; a node coming back does not take the writes back (the writer would flip twice)
    '  stick-table type integer size 1',
    '  stick on int(1)',
    ...nodes.map((n, i) => `  server ${n.name} 127.0.0.1:${n.port} check${i === 0 ? '' : ' backup'}`),
    '',
  ].join('\n');

export class GaleraCluster {
  private readonly servers = new Map<string, ChildProcess>();
  private balancer: ChildProcess | null = null;

  private constructor(
    readonly nodes: readonly GaleraNode[],
    readonly balancerPort: number,
    readonly dir: string,
    private readonly ownsDir: boolean,
    private readonly say: (line: string) => void,
  ) {}

  /** The service's MySQL: the balancer, which leads to the writer. */
  get url(): string {
    return `mysql://root@127.0.0.1:${this.balancerPort}`;
  }

  node(name: string): GaleraNode {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name} (nodes: ${this.nodes.map((n) => n.name).join(', ')})`);
    return node;
  }

  pidOf(name: string): number | null {
    const server = this.servers.get(name);
    return server && running(server) ? (server.pid ?? null) : null;
  }

  get balancerPid(): number | null {
    return this.balancer && running(this.balancer) ? (this.balancer.pid ?? null) : null;
  }

  static async start(options: GaleraClusterOptions = {}): Promise<GaleraCluster> {
    const say = options.say ?? (() => undefined);
    const ownsDir = options.dir === undefined;
    const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'seckill-galera-'));
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    // the nodes run as mysql when this is root (the SST's rsync daemon refuses to run as root): their folder,
    // logs and sockets are mysql's
    fs.chmodSync(dir, 0o755);
    if (isRoot()) await run('chown', ['mysql:mysql', dir]);
    const ports = await freePorts(NODES * PORTS_PER_NODE + 1);
    const nodes = Array.from({ length: NODES }, (_, i) => {
      const [port, gcommPort, istPort, sstPort] = ports.slice(i * PORTS_PER_NODE, (i + 1) * PORTS_PER_NODE);
      return {
        name: `galera-${i + 1}`,
        port: port!,
        gcommPort: gcommPort!,
        istPort: istPort!,
        sstPort: sstPort!,
        datadir: path.join(dir, `galera-${i + 1}`),
      };
    });
    const cluster = new GaleraCluster(nodes, ports.at(-1)!, dir, ownsDir, say);
    try {
      say(`starting MariaDB Galera Cluster (${NODES} nodes) in ${dir}`);
      await cluster.install(nodes[0]!);
      await cluster.launch(nodes[0]!, { bootstrap: true });
      // one joiner at a time: a donor serves one full copy at once
      for (const node of nodes.slice(1)) await cluster.launch(node, { bootstrap: false });
      await cluster.startBalancer();
      await sql(
        cluster.balancerPort,
        'CREATE DATABASE IF NOT EXISTS galera_probe; CREATE TABLE IF NOT EXISTS galera_probe.beat (id INT PRIMARY KEY, at BIGINT NOT NULL)',
      );
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The first node's system tables; a joiner's folder stays empty until its SST fills it. */
  private async install(node: GaleraNode): Promise<void> {
    fs.mkdirSync(node.datadir, { recursive: true });
    await run(
      'mariadb-install-db',
      [
        '--no-defaults',
        `--datadir=${node.datadir}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        ...asMysql(),
      ],
      { timeout: 60_000 },
    );
  }

  /** mariadbd's arguments for a node, the same for its start and for recovering its position */
  private serverArgs(node: GaleraNode): string[] {
    const peers = this.nodes.map((n) => `127.0.0.1:${n.gcommPort}`).join(',');
    return [
      '--no-defaults',
      ...asMysql(),
      `--datadir=${node.datadir}`,
      `--port=${node.port}`,
      '--bind-address=127.0.0.1',
      `--socket=${path.join(this.dir, `${node.name}.sock`)}`,
      `--pid-file=${path.join(this.dir, `${node.name}.pid`)}`,
      '--max-connections=400',
      '--innodb-buffer-pool-size=128M',
      // durability comes from the other nodes holding every commit: a node's own log is flushed once a second
      '--innodb-flush-log-at-trx-commit=2',
      // Galera's requirements: row-based replication, interleaved auto-increment locks
      '--binlog-format=ROW',
      '--default-storage-engine=InnoDB',
      '--innodb-autoinc-lock-mode=2',
      '--wsrep-on=ON',
      '--wsrep-provider=/usr/lib/galera/libgalera_smm.so',
      '--wsrep-cluster-name=seckill',
      `--wsrep-node-name=${node.name}`,
      '--wsrep-node-address=127.0.0.1',
      `--wsrep-cluster-address=gcomm://${peers}`,
      `--wsrep-provider-options=${[
        `gmcast.listen_addr=tcp://127.0.0.1:${node.gcommPort}`,
        `ist.recv_addr=127.0.0.1:${node.istPort}`,
        'gcache.size=256M',
        ...PROVIDER_TIMEOUTS,
      ].join(';')}`,
      `--wsrep-sst-receive-address=127.0.0.1:${node.sstPort}`,
      '--wsrep-sst-method=rsync',
    ];
  }

  /**
   * `<dir>/<node>.rejoin`, for an operator: what `restart` does, as a shell script. It reads the position the
   * node's InnoDB log holds, then starts the node from it in the background, so that it rejoins by IST.
   */
  private writeRejoinScript(node: GaleraNode): void {
    const quoted = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;
    const args = this.serverArgs(node).map(quoted).join(' ');
    const recover = path.join(this.dir, `${node.name}.recover.err`);
    fs.writeFileSync(
      path.join(this.dir, `${node.name}.rejoin`),
      [
        '#!/bin/sh',
        `# ${node.name} of the cluster in ${this.dir}, started again after it died: recover, then rejoin by IST`,
        'set -e',
        `/usr/sbin/mariadbd ${args} --wsrep-recover --log-error=${quoted(recover)}`,
        `position=$(sed -n 's/.*WSREP: Recovered position: \\([^ ]*\\).*/\\1/p' ${quoted(recover)} | tail -n 1)`,
        `/usr/sbin/mariadbd ${args} --log-error=${quoted(path.join(this.dir, `${node.name}.err`))} ` +
          '${position:+--wsrep-start-position=$position} &',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
  }

  /**
   * The last write a killed node holds, read from its InnoDB log (`--wsrep-recover`): started from there, it
   * asks its peers for the writes it missed alone (IST) instead of a full copy.
   */
  private async recoveredPosition(node: GaleraNode): Promise<string | null> {
    const log = path.join(this.dir, `${node.name}.recover.err`);
    fs.rmSync(log, { force: true });
    await run('/usr/sbin/mariadbd', [...this.serverArgs(node), '--wsrep-recover', `--log-error=${log}`], {
      timeout: 60_000,
    });
    const found = /WSREP: Recovered position: (\S+:\d+)/.exec(fs.readFileSync(log, 'utf8'));
    return found && !found[1]!.endsWith(':-1') ? found[1]! : null;
  }

  private async launch(
    node: GaleraNode,
    how: Readonly<{ bootstrap: boolean; from?: string | null }>,
  ): Promise<void> {
    const { bootstrap } = how;
    fs.mkdirSync(node.datadir, { recursive: true });
    if (isRoot()) await run('chown', ['-R', 'mysql:mysql', node.datadir]);
    this.writeRejoinScript(node);
    const server = spawn(
      '/usr/sbin/mariadbd',
      [
        ...this.serverArgs(node),
        `--log-error=${path.join(this.dir, `${node.name}.err`)}`,
        ...(how.from ? [`--wsrep-start-position=${how.from}`] : []),
        ...(bootstrap ? ['--wsrep-new-cluster'] : []),
      ],
      { stdio: 'ignore' },
    );
    server.once('error', () => undefined);
    this.servers.set(node.name, server);
    await waitFor(
      `${node.name} synced with the cluster`,
      async () => {
        if (!running(server))
          throw new Error(
            `${node.name} exited (${server.exitCode ?? server.signalCode}); its log: ${path.join(this.dir, `${node.name}.err`)}`,
          );
        return (await this.state(node.name)).state === 'Synced';
      },
      120_000,
    );
    this.say(`${node.name} synced (${bootstrap ? 'a new cluster' : 'joined'}) on 127.0.0.1:${node.port}`);
  }

  /** Runs SQL on one node (as root), answering its rows tab-separated. */
  sql(name: string, statement: string): Promise<string> {
    return sql(this.node(name).port, statement);
  }

  /** What the node says of its replication. */
  async state(name: string): Promise<GaleraNodeState> {
    const status = Object.fromEntries(
      (
        await sql(
          this.node(name).port,
          "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_status', 'wsrep_cluster_size')",
        )
      )
        .trim()
        .split('\n')
        .map((line) => line.split('\t') as [string, string]),
    );
    return {
      state: status['wsrep_local_state_comment'] ?? 'unknown',
      component: status['wsrep_cluster_status'] ?? 'unknown',
      size: Number(status['wsrep_cluster_size'] ?? 0),
    };
  }

  private get statsSocket(): string {
    return path.join(this.dir, 'haproxy-galera.sock');
  }

  /** Each node as the balancer's health check has it now: UP, DOWN, or on its way (`UP 1/2`, `DOWN 1/2`). */
  async balancerView(): Promise<Record<string, string>> {
    const csv = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(this.statsSocket, () => socket.end('show stat\n'));
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.once('end', () => resolve(text));
      socket.once('error', reject);
    });
    const lines = csv.trim().split('\n');
    const header = lines[0]!.replace(/^# /, '').split(',');
    const at = (name: string) => header.indexOf(name);
    return Object.fromEntries(
      lines
        .slice(1)
        .map((line) => line.split(','))
        .filter((f) => this.nodes.some((n) => n.name === f[at('svname')]))
        .map((f) => [f[at('svname')]!, f[at('status')]!]),
    );
  }

  /** The node the balancer leads connections to now. */
  async writer(): Promise<string> {
    return (await sql(this.balancerPort, 'SELECT @@wsrep_node_name')).trim();
  }

  /**
   * Resolves once a write through the balancer commits (a row of the cluster's own probe table): after a writer
   * died, when the service's writes go through again.
   */
  async writable(timeoutMs = 60_000): Promise<void> {
    await waitFor(
      'a write through the balancer',
      async () => {
        await sql(this.balancerPort, `REPLACE INTO galera_probe.beat VALUES (1, ${Date.now()})`);
        return true;
      },
      timeoutMs,
    );
  }

  private async startBalancer(): Promise<void> {
    const check = path.join(projectRoot(), 'scripts', 'cluster', 'galera-check');
    this.balancer = await startHaproxy({
      dir: this.dir,
      name: 'haproxy-galera',
      config: galeraBalancerConfig(this.balancerPort, this.nodes, check, this.statsSocket),
      what: 'HAProxy leading to a Galera node',
      ready: async () => (await this.writer()) !== '',
    });
  }

  /** SIGKILLs a node: its transactions in flight are lost with it, its peers go on as a primary component of two. */
  async kill(name: string): Promise<void> {
    const server = this.servers.get(name);
    if (!server) return;
    await signalled(server, 'SIGKILL');
    // its pid may be another process's soon: stop() must not find it
    fs.rmSync(path.join(this.dir, `${name}.pid`), { force: true });
  }

  /** Starts a killed node again; it rejoins by IST (the writes it missed) and resolves once it is synced. */
  async restart(name: string): Promise<void> {
    const server = this.servers.get(name);
    if (server && running(server)) throw new Error(`${name} is still running`);
    const node = this.node(name);
    await this.launch(node, { bootstrap: false, from: await this.recoveredPosition(node) });
  }

  /** Resolves once every node runs, is synced and sees all the others. */
  async whole(timeoutMs = 60_000): Promise<void> {
    await waitFor(
      'every Galera node synced in one primary component',
      async () => {
        for (const node of this.nodes) {
          const state = await this.state(node.name);
          if (state.state !== 'Synced' || state.component !== 'Primary' || state.size !== NODES) return false;
        }
        return true;
      },
      timeoutMs,
    );
  }

  async stop(): Promise<void> {
    if (this.balancer && running(this.balancer)) await signalled(this.balancer, 'SIGTERM');
    await Promise.all(
      [...this.servers.values()].map(async (server) => {
        const done = exited(server);
        server.kill('SIGTERM');
        const timer = setTimeout(() => server.kill('SIGKILL'), 30_000);
        await done;
        clearTimeout(timer);
      }),
    );
    this.servers.clear();
    // a node an operator started again by hand (its .rejoin script) is not a child of this process
    await Promise.all(this.nodes.map((node) => this.stopByPidFile(node)));
    if (this.ownsDir) fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private async stopByPidFile(node: GaleraNode): Promise<void> {
    const pid = Number(
      fs.readFileSync(path.join(this.dir, `${node.name}.pid`), { encoding: 'utf8', flag: 'a+' }),
    );
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    if (!Number.isInteger(pid) || pid <= 0 || !alive()) return;
    process.kill(pid, 'SIGTERM');
    await waitFor(`${node.name} (pid ${pid}) stopped`, () => !alive(), 30_000).catch(() => {
      if (alive()) process.kill(pid, 'SIGKILL');
    });
  }
}

/** A root process runs the nodes as mysql (rsync's SST refuses root); anyone else runs them as themselves. */
const isRoot = (): boolean => process.getuid?.() === 0;
const asMysql = (): string[] => (isRoot() ? ['--user=mysql'] : []);
