/** Child processes of the benchmark: started with this Node, their output kept for errors, always stopped. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const KEEP_OUTPUT = 20_000;

/** pino lines at warn or above that a child wrote: how many, by level and by message */
export type LogSummary = Readonly<{
  warnings: number;
  errors: number;
  messages: Readonly<Record<string, number>>;
}>;

export type Child = Readonly<{
  name: string;
  process: ChildProcess;
  /** the last few kilobytes it wrote, for error messages */
  output: () => string;
  logs: () => LogSummary;
  stop: () => Promise<void>;
}>;

const PINO_LEVEL = /"level":(\d+)/;
const PINO_MSG = /"msg":"((?:[^"\\]|\\.)*)"/;

const logCounter = () => {
  let warnings = 0;
  let errors = 0;
  const messages: Record<string, number> = {};
  let partial = '';
  const feed = (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const level = Number(PINO_LEVEL.exec(line)?.[1] ?? 0);
      if (level < 40) continue;
      if (level >= 50) errors++;
      else warnings++;
      const msg = PINO_MSG.exec(line)?.[1] ?? line.slice(0, 120);
      messages[msg] = (messages[msg] ?? 0) + 1;
    }
  };
  return { feed, summary: (): LogSummary => ({ warnings, errors, messages: { ...messages } }) };
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A free TCP port on loopback (asked of the kernel, then released for the child to take). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });

/** Runs a Node script to completion (e.g. `main.js migrate`) and answers its stdout. */
export const runNode = async (script: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> => {
  const { stdout } = await run(process.execPath, [script, ...args], { env, timeout: 60_000 });
  return stdout;
};

/**
 * Starts `node [nodeArgs…] script args…`; SIGTERM on stop, SIGKILL if it has not exited after `graceMs`.
 */
export const startNode = (
  name: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  { graceMs = 15_000, nodeArgs = [] }: Readonly<{ graceMs?: number; nodeArgs?: readonly string[] }> = {},
): Child => {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const counter = logCounter();
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    counter.feed(text);
    output = (output + text).slice(-KEEP_OUTPUT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    process: child,
    output: () => output,
    logs: counter.summary,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
};

const exitedEarly = (child: Child): Error =>
  new Error(
    `${child.name} exited (${child.process.exitCode ?? child.process.signalCode}) before it was ready:\n${child.output()}`,
  );

/** Waits for a `{"port":N}` line on the child's stdout (the baselines print one when they listen). */
export const portAnnounced = (child: Child, timeoutMs = 15_000): Promise<number> =>
  new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`${child.name} announced no port:\n${child.output()}`)),
      timeoutMs,
    );
    const onExit = () => {
      clearTimeout(timer);
      reject(exitedEarly(child));
    };
    child.process.once('exit', onExit);
    child.process.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /\{"port":(\d+)\}/.exec(seen);
      if (!match?.[1]) return;
      clearTimeout(timer);
      child.process.off('exit', onExit);
      resolve(Number(match[1]));
    });
  });

/** Polls `url` until it answers 200 (the service's GET /readyz), the child dies, or the deadline passes. */
export const answers200 = async (child: Child, url: string, timeoutMs = 90_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null || child.process.signalCode !== null) throw exitedEarly(child);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
      last = `${response.status} ${await response.text()}`;
      if (response.status === 200) return;
    } catch (error) {
      last = String(error);
    }
    await sleep(250);
  }
  throw new Error(`${child.name}: ${url} not 200 within ${timeoutMs} ms (last: ${last})\n${child.output()}`);
};

/** The node flags that let `heapSnapshot` ask a child for a heap snapshot, written into `dir`. */
export const heapSnapshotFlags = (dir: string): string[] => [
  '--heapsnapshot-signal=SIGUSR2',
  `--diagnostic-dir=${dir}`,
];

/**
 * Has a child started with `heapSnapshotFlags(dir)` write a heap snapshot (compare them by constructor in
 * Chrome's DevTools), and answers the file's name once it is there.
 */
export const heapSnapshot = async (child: Child, dir: string): Promise<string> => {
  const before = new Set(await readdir(dir));
  child.process.kill('SIGUSR2');
  for (let waited = 0; waited < 120_000; waited += 250) {
    const written = (await readdir(dir)).filter((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    // V8 writes the file in one go once the snapshot is taken; wait for its size to settle
    if (written.length > 0) {
      const file = path.join(dir, written[0]!);
      for (let size = -1; ;) {
        const now = (await stat(file)).size;
        if (now > 0 && now === size) return written[0]!;
        size = now;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${child.name} wrote no heap snapshot within 2 minutes`);
};
