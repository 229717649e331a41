/**
 * A local Redis Cluster on loopback: `masters` masters with `replicas` replicas each, started from the machine's
 * `redis-server` and joined with `redis-cli --cluster create`. Nothing is kept on disk but each node's cluster
 * configuration (`nodes-<port>.conf`), so a node that was killed comes back with its identity, as a replica of
 * whoever took its slots over. `npm run cluster` and the scale tests use it; the integration tests use it for
 * the adapters' contract suites.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { consecutiveFreePorts, exited, running, signalled, waitFor } from './processes.js';

const run = promisify(execFile);

export type RedisClusterOptions = Readonly<{
  masters?: number;
  /** replicas per master (default 1) */
  replicas?: number;
  /**
   * How long a master may not answer before the others count it failed and its replica takes over (Redis's
   * default is 15 s; a drill wants seconds).
   */
  nodeTimeoutMs?: number;
  /** where the nodes keep their cluster configuration and logs (default: a fresh temporary folder) */
  dir?: string;
}>;

export type RedisNodeRole = Readonly<{ port: number; role: 'master' | 'replica'; slots: number }>;

/** `count` consecutive ports whose cluster-bus ports (port + 10000) are free too. */
const freePorts = (count: number): Promise<number[]> =>
  consecutiveFreePorts('a Redis Cluster', {
    count,
    lowest: 20_000,
    span: 9_000,
    alsoFree: (p) => [p + 10_000],
  });

const cli = async (port: number, ...args: string[]): Promise<string> =>
  (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 })).stdout;

/** The number of slots in a `CLUSTER NODES` line's ranges ("0-5460 5461 …"). */
const slotCount = (ranges: readonly string[]): number =>
  ranges
    .filter((r) => !r.startsWith('['))
    .reduce((sum, r) => {
      const [from, to] = r.split('-').map(Number);
      return sum + (to === undefined ? 1 : to - from! + 1);
    }, 0);

export class RedisCluster {
  private readonly servers = new Map<number, ChildProcess>();

  private constructor(
    readonly ports: readonly number[],
    readonly dir: string,
    private readonly nodeTimeoutMs: number,
    private readonly ownsDir: boolean,
  ) {}

  /** Every node, masters and replicas: the client finds the layout from any of them. */
  get url(): string {
    return this.ports.map((p) => `redis://127.0.0.1:${p}`).join(',');
  }

  pidOf(port: number): number | null {
    return this.servers.get(port)?.pid ?? null;
  }

  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const masters = options.masters ?? 3;
    const replicas = options.replicas ?? 1;
    const ownsDir = options.dir === undefined;
    const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'seckill-redis-cluster-'));
    fs.mkdirSync(dir, { recursive: true });
    const ports = await freePorts(masters * (1 + replicas));
    const cluster = new RedisCluster(ports, dir, options.nodeTimeoutMs ?? 5_000, ownsDir);
    try {
      await Promise.all(ports.map((port) => cluster.launch(port)));
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((p) => `127.0.0.1:${p}`),
          '--cluster-replicas',
          String(replicas),
          '--cluster-yes',
        ],
        { timeout: 30_000 },
      );
      await cluster.healthy();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** Starts the node on `port` (again, after a kill: it keeps its identity from its nodes file). */
  private async launch(port: number): Promise<void> {
    const server = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        String(this.nodeTimeoutMs),
        // a replica takes over however long it has been cut off from its master: a drill kills masters
        '--cluster-replica-validity-factor',
        '0',
        '--dir',
        this.dir,
        '--logfile',
        `redis-${port}.log`,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { stdio: 'ignore' },
    );
    this.servers.set(port, server);
    await waitFor(`redis ${port} answering`, async () => (await cli(port, 'ping')).trim() === 'PONG');
  }

  /** Each live node's role and the slots it serves, as a live node sees them. */
  async layout(): Promise<RedisNodeRole[]> {
    for (const port of this.livePorts()) {
      const text = await cli(port, 'cluster', 'nodes').catch(() => '');
      if (!text) continue;
      return text
        .trim()
        .split('\n')
        .map((line) => line.split(' '))
        .filter((fields) => !fields[2]!.includes('fail'))
        .map((fields) => ({
          port: Number(fields[1]!.split(':')[1]!.split('@')[0]),
          role: fields[2]!.includes('master') ? ('master' as const) : ('replica' as const),
          slots: slotCount(fields.slice(8)),
        }));
    }
    throw new Error('no Redis node answers');
  }

  /** The masters serving slots now. */
  async masters(): Promise<number[]> {
    return (await this.layout()).filter((n) => n.role === 'master' && n.slots > 0).map((n) => n.port);
  }

  private livePorts(): number[] {
    return this.ports.filter((p) => {
      const server = this.servers.get(p);
      return server !== undefined && running(server);
    });
  }

  /** Resolves once every live node says the cluster is ok and all 16384 slots are served by live masters. */
  async healthy(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      'every Redis node saying cluster_state:ok',
      async () => {
        for (const port of this.livePorts())
          if (!(await cli(port, 'cluster', 'info')).includes('cluster_state:ok')) return false;
        const served = (await this.layout())
          .filter((n) => n.role === 'master')
          .reduce((sum, n) => sum + n.slots, 0);
        return served === 16_384;
      },
      timeoutMs,
    );
  }

  /** SIGKILLs the node on `port`: a master's replica takes its slots over once the node timeout has passed. */
  async kill(port: number): Promise<void> {
    const server = this.servers.get(port);
    if (!server) return;
    await signalled(server, 'SIGKILL');
  }

  /** Starts a killed node again; it rejoins (a former master as a replica) and the cluster is whole again. */
  async restart(port: number): Promise<void> {
    await this.launch(port);
    await this.healthy();
    await waitFor('the restarted node known to the others', async () =>
      (await this.layout()).some((n) => n.port === port),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(
      [...this.servers.values()].map(async (server) => {
        const done = exited(server);
        server.kill('SIGTERM');
        await done;
      }),
    );
    this.servers.clear();
    if (this.ownsDir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
