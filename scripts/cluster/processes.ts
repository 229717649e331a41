/** What the local clusters' scripts do with the processes they start and the servers they wait for. */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process of this id is running (a signal 0 reaches it). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The `java` of JAVA_HOME when it is set, else the one on the PATH (the Kafka broker's and Zipkin's). */
export const javaBin = (): string =>
  process.env['JAVA_HOME'] ? path.join(process.env['JAVA_HOME'], 'bin', 'java') : 'java';

/**
 * Resolves once `probe` answers true, asking every 100 ms for at most `timeoutMs`. A probe that rejects (a
 * server not answering yet) is asked again; one that throws at once (the process it waits for has exited) ends
 * the wait with its error.
 */
export const waitFor = async (
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve(probe()).catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
};

export const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

/**
 * Keeps the last lines a process writes on stderr as it runs; the function returns them once its output has
 * ended (at most a second after it exited), for the error that says why a process stopped.
 */
export const stderrTail = (child: ChildProcess, lines = 8): (() => Promise<string>) => {
  let tail = '';
  const ended = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8_000);
  });
  return async () => {
    await Promise.race([ended, sleep(1_000)]);
    return tail.trimEnd().split('\n').slice(-lines).join('\n');
  };
};

/** Resolves once the process has exited (at once if it already has). */
export const exited = (child: ChildProcess): Promise<void> =>
  running(child) ? new Promise((resolve) => child.once('exit', () => resolve())) : Promise.resolve();
/** The project's root: the folder holding package.json above this file (in scripts/ or dist/scripts/). */
export const projectRoot = (): string => {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`package.json not found above ${import.meta.dirname}`);
  }
};

/** Whether nothing listens on `port` of 127.0.0.1 now. */
export const isFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/**
 * `count` consecutive free ports from a random base in [lowest, lowest + span), each with the ports `alsoFree`
 * names for it free too (a Redis node's cluster bus).
 */
export const consecutiveFreePorts = async (
  what: string,
  {
    count,
    lowest,
    span,
    alsoFree = () => [],
  }: Readonly<{
    count: number;
    lowest: number;
    span: number;
    alsoFree?: (port: number) => number[];
  }>,
): Promise<number[]> => {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = lowest + Math.floor(Math.random() * span);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const checks = await Promise.all(ports.flatMap((p) => [p, ...alsoFree(p)]).map(isFree));
    if (checks.every(Boolean)) return ports;
  }
  throw new Error(`no free ports for ${what}`);
};

/** Sends `signal` to the process and resolves once it has exited. */
export const signalled = async (child: ChildProcess, signal: NodeJS.Signals): Promise<void> => {
  const done = exited(child);
  child.kill(signal);
  await done;
};

/**
 * HAProxy in the foreground with `config`, written to `<dir>/<name>.cfg` and logging to `<dir>/<name>.log`;
 * resolves once `ready` answers true (it exits: the wait ends with where its log is).
 */
export const startHaproxy = async (
  options: Readonly<{
    dir: string;
    name: string;
    config: string;
    what: string;
    ready: () => Promise<boolean>;
  }>,
): Promise<ChildProcess> => {
  const config = path.join(options.dir, `${options.name}.cfg`);
  const logFile = path.join(options.dir, `${options.name}.log`);
  fs.writeFileSync(config, options.config);
  const log = fs.createWriteStream(logFile, { flags: 'a' });
  const haproxy = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  haproxy.stdout.pipe(log);
  haproxy.stderr.pipe(log);
  haproxy.once('error', () => undefined);
  await waitFor(
    options.what,
    () => {
      if (!running(haproxy))
        throw new Error(
          `haproxy exited (${haproxy.exitCode ?? haproxy.signalCode}); is it installed (apt-get install haproxy)? Its log: ${logFile}`,
        );
      return options.ready();
    },
    60_000,
  );
  return haproxy;
};

/**
 * A script's command line: `<command> [--name value]…`, each option named in `names` taking a value; the
 * command is `fallback` when none is given. An unknown option, or one without its value, is an error.
 */
export const commandLine = <N extends string>(
  argv: readonly string[],
  names: readonly N[],
  fallback: string,
): { command: string; values: Partial<Record<N, string>> } => {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
    allowPositionals: true,
    strict: true,
  });
  return { command: positionals.at(-1) ?? fallback, values: values as Partial<Record<N, string>> };
};
