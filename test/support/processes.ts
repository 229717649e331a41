import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect } from '@jest/globals';
import { SERVICE_NODE_FLAGS } from '../../src/infrastructure/node-flags.js';
import { eventually } from './contract-helpers.js';

export type LogLine = Record<string, unknown>;
export type WorkerProcess = Readonly<{ child: ChildProcess; lines: LogLine[]; stop: () => Promise<void> }>;

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));

/** A `seckill worker` process (from dist/), with its JSON log lines kept. */
export const startWorker = (env: Record<string, string>): WorkerProcess => startService('worker', env);

/** A `seckill <role>` process (from dist/), with its JSON log lines kept. */
export const startService = (
  role: 'worker' | 'serve' | 'all',
  env: Record<string, string>,
): WorkerProcess => {
  const lines: LogLine[] = [];
  const child = spawn('node', [...SERVICE_NODE_FLAGS, 'dist/src/infrastructure/main.js', role], {
    env: { ...process.env, ...env, SECKILL_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // not a log line
    }
  });
  return {
    child,
    lines,
    stop: async () => {
      const done = exited(child);
      child.kill('SIGTERM');
      await done;
    },
  };
};

/** The URL a `seckill serve` or `seckill all` process prints once its API listens (waits for it, 30 s at most). */
export const listeningUrl = async (proc: WorkerProcess): Promise<string> => {
  let url = '';
  await eventually(
    () => {
      const line = proc.lines.find((l) => l['msg'] === 'seckill API listening');
      expect(line).toBeDefined();
      url = String(line!['url']);
    },
    30_000,
    20,
  );
  return url;
};

/** A Redis server of the test's own, which the test may kill and start again empty. */
export const startRedisServer = async (port: number) => {
  let child: ChildProcess | null = null;
  const launch = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    const { Redis } = await import('ioredis');
    const probe = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      retryStrategy: () => 50,
      maxRetriesPerRequest: 1,
    });
    try {
      for (let i = 0; i < 100; i += 1) {
        if ((await probe.ping().catch(() => null)) === 'PONG') return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`redis-server on ${port} did not start`);
    } finally {
      probe.disconnect();
    }
  };
  const kill = async () => {
    if (!child) return;
    const done = exited(child);
    child.kill('SIGKILL');
    await done;
    child = null;
  };
  await launch();
  return { url: `redis://127.0.0.1:${port}`, kill, restartEmpty: async () => (await kill(), await launch()) };
};
