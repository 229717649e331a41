import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const isFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** Three ports whose cluster-bus ports (port + 10000) are free too. */
const freePorts = async (count: number): Promise<number[]> => {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * 9_000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const checks = await Promise.all(ports.flatMap((p) => [isFree(p), isFree(p + 10_000)]));
    if (checks.every(Boolean)) return ports;
  }
  throw new Error('no free ports for a Redis Cluster');
};

const waitFor = async (what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms`);
};

const cli = async (port: number, ...args: string[]): Promise<string> =>
  (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;

export type RedisCluster = Readonly<{ ports: number[]; url: string; stop: () => Promise<void> }>;

/** Starts a 3-master Redis Cluster on loopback (redis-server --cluster-enabled yes + redis-cli --cluster create). */
export const startRedisCluster = async (): Promise<RedisCluster> => {
  const dir = await mkdtemp(join(tmpdir(), 'seckill-cluster-'));
  const ports = await freePorts(3);
  const servers: ChildProcess[] = ports.map((port) =>
    spawn(
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
        '5000',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { stdio: 'ignore' },
    ),
  );
  const stop = async () => {
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            if (server.exitCode !== null) return resolve();
            server.once('exit', () => resolve());
            server.kill('SIGTERM');
          }),
      ),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports)
      await waitFor(`redis ${port}`, async () => (await cli(port, 'ping')).trim() === 'PONG');
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports)
      await waitFor(`cluster state on ${port}`, async () =>
        (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'),
      );
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, url: ports.map((p) => `redis://127.0.0.1:${p}`).join(','), stop };
};
