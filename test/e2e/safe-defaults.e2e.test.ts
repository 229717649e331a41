import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createInterface } from 'node:readline';
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/infrastructure/config.js';
import { createLogger } from '../../src/infrastructure/logger.js';
import { SeckillService } from '../../src/infrastructure/service.js';

const SECRET = 'safe-defaults-e2e-secret-safe-defaults-e2e';

/** This machine's addresses other than loopback: where another machine would reach it. */
const externalAddresses = (): string[] =>
  Object.values(networkInterfaces())
    .flat()
    .filter((i) => i !== undefined && !i.internal && i.family === 'IPv4')
    .map((i) => i!.address);

/** Whether a TCP connection to address:port is taken, or refused. */
const reach = (address: string, port: number): Promise<string> =>
  new Promise((resolve) => {
    const socket = connect({ host: address, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

/** The environment of a shell with no seckill settings, plus these. */
const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('SECKILL_')) env[name] = value;
  return { ...env, PORT: '0', SECKILL_DEMO_PRODUCT: 'false', SECKILL_LOG_LEVEL: 'info', ...extra };
};

type LogLine = Record<string, unknown>;
type Run = Readonly<{
  child: ChildProcess;
  logs: LogLine[];
  stderr: () => string;
  /** resolves with the first log line that matches, as soon as it is written; rejects if the process exits first */
  logLine: (matches: (line: LogLine) => boolean) => Promise<LogLine>;
}>;

/** `seckill <command>` from dist/, its JSON log lines kept as they come. */
const seckill = (command: string, env: Record<string, string>): Run => {
  const child = spawn('node', ['dist/src/infrastructure/main.js', command], {
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  const waiters: Array<(line: LogLine) => void> = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (text) => {
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return; // the demo banner, not a log line
    }
    logs.push(line);
    for (const waiter of waiters) waiter(line);
  });
  const logLine = (matches: (line: LogLine) => boolean) =>
    new Promise<LogLine>((resolve, reject) => {
      const found = logs.find(matches);
      if (found) return resolve(found);
      waiters.push((line) => {
        if (matches(line)) resolve(line);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
  return { child, logs, stderr: () => stderr, logLine };
};

const exitCodeOf = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', r));

describe('safe defaults: the development secret serves this machine only', () => {
  it('listens on loopback only when no secret is set: other interfaces are refused', async () => {
    const config = loadConfig({ PORT: '0', SECKILL_LOG_LEVEL: 'silent', SECKILL_DEMO_PRODUCT: 'false' });
    const service = await SeckillService.start(config, { http: true, worker: true }, createLogger('silent'));
    try {
      const port = Number(new URL(service.url).port);
      expect(await reach('127.0.0.1', port)).toBe('connected');
      for (const address of externalAddresses())
        expect({ address, outcome: await reach(address, port) }).toEqual({
          address,
          outcome: 'ECONNREFUSED',
        });
    } finally {
      await service.close();
    }
  });

  it('with a secret of its own, the memory profile still serves this machine only, unless told to listen wider', async () => {
    const settings = {
      PORT: '0',
      SECKILL_LOG_LEVEL: 'silent',
      SECKILL_DEMO_PRODUCT: 'false',
      SECKILL_JWT_SECRET: SECRET,
    };
    const service = await SeckillService.start(
      loadConfig(settings),
      { http: true, worker: true },
      createLogger('silent'),
    );
    try {
      const port = Number(new URL(service.url).port);
      expect(await reach('127.0.0.1', port)).toBe('connected');
      for (const address of externalAddresses())
        expect({ address, outcome: await reach(address, port) }).toEqual({
          address,
          outcome: 'ECONNREFUSED',
        });
    } finally {
      await service.close();
    }
    const wide = await SeckillService.start(
      loadConfig({ ...settings, SECKILL_HOST: '0.0.0.0' }),
      { http: true, worker: true },
      createLogger('silent'),
    );
    try {
      const port = Number(new URL(wide.url).port);
      for (const address of ['127.0.0.1', ...externalAddresses()])
        expect({ address, outcome: await reach(address, port) }).toEqual({ address, outcome: 'connected' });
    } finally {
      await wide.close();
    }
  });

  it('says loudly at start that it uses the development secret and listens on 127.0.0.1 only', async () => {
    const run = seckill('all', {});
    try {
      const listening = await run.logLine((l) => l['msg'] === 'seckill API listening');
      expect(listening['host']).toBe('127.0.0.1');
      const warning = run.logs.find((l) => String(l['msg']).includes('SECKILL_JWT_SECRET is not set'));
      expect(warning).toMatchObject({ level: 40, host: '127.0.0.1' });
      expect(String(warning?.['msg'])).toContain('Listening on 127.0.0.1 only');
    } finally {
      run.child.kill('SIGTERM');
      await exitCodeOf(run.child);
    }
  });

  it('refuses to start on a non-loopback SECKILL_HOST with the development secret, and says what to set', async () => {
    const run = seckill('serve', { SECKILL_HOST: '0.0.0.0' });
    expect(await exitCodeOf(run.child)).toBe(2);
    expect(run.stderr()).toContain('SECKILL_HOST="0.0.0.0"');
    expect(run.stderr()).toContain('set SECKILL_JWT_SECRET');
  });

  it('still refuses to start the real profile without a secret', async () => {
    const run = seckill('serve', { SECKILL_PROFILE: 'real' });
    expect(await exitCodeOf(run.child)).toBe(2);
    expect(run.stderr()).toContain('SECKILL_JWT_SECRET is required on the real profile');
  });
});
