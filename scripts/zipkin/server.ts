/**
 * A local Zipkin server, no Docker: Zipkin's own executable jar (`io.zipkin:zipkin-server`, classifier `exec`)
 * is fetched from Maven Central once into `.cache/zipkin/<version>/`, and run on loopback with its in-memory
 * storage. `npm run cluster`, the tracing test and the bench's tracing phase start it; `scripts/zipkin-server`
 * (a shell wrapper) runs it:
 *
 *   scripts/zipkin-server [run]  [--port 9411] [--dir DIR] [--version V]   foreground, Ctrl-C stops
 *   scripts/zipkin-server start  [same options]                           detached, prints the URL
 *   scripts/zipkin-server stop   [--dir DIR]
 *   scripts/zipkin-server fetch  [--version V]                            prints the jar's path
 *
 * The service sends its spans to `<url>/api/v2/spans` (SECKILL_OTEL_ZIPKIN_URL); the UI is `<url>/zipkin/`.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../kafka/cluster.js';
import { alive, commandLine, javaBin, projectRoot, sleep, waitFor } from '../cluster/processes.js';

const run = promisify(execFile);

export const DEFAULT_ZIPKIN_VERSION = '3.5.1';

type Say = (line: string) => void;
const toStderr: Say = (line) => process.stderr.write(`zipkin-server: ${line}\n`);

export const zipkinCacheDir = (): string =>
  process.env['SECKILL_ZIPKIN_CACHE'] ?? path.join(projectRoot(), '.cache', 'zipkin');

/** Zipkin's executable jar for `version`, fetched with Maven the first time (later calls reuse it). */
export const fetchZipkin = async (version = DEFAULT_ZIPKIN_VERSION, say: Say = toStderr): Promise<string> => {
  const home = path.join(zipkinCacheDir(), version);
  const jar = path.join(home, `zipkin-server-${version}-exec.jar`);
  if (fs.existsSync(jar)) return jar;
  say(`fetching Zipkin ${version} (io.zipkin:zipkin-server, exec) from Maven Central into ${home}`);
  const partial = `${home}.partial`;
  fs.rmSync(partial, { recursive: true, force: true });
  try {
    await run(
      'mvn',
      [
        '-B',
        '-q',
        'dependency:copy',
        `-Dartifact=io.zipkin:zipkin-server:${version}:jar:exec`,
        `-DoutputDirectory=${partial}`,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`mvn could not fetch Zipkin ${version}:\n${stdout}${stderr}`.trim(), { cause: error });
  }
  fs.mkdirSync(home, { recursive: true });
  fs.renameSync(path.join(partial, path.basename(jar)), jar);
  fs.rmSync(partial, { recursive: true, force: true });
  return jar;
};

export type ZipkinOptions = Readonly<{
  /** 0 (the default): a free port */
  port?: number;
  /** where its pid, port and log are kept (default .cache/zipkin/local) */
  dir?: string;
  version?: string;
  /** spans kept in memory before the oldest go (default 500,000) */
  maxSpans?: number;
  say?: Say;
}>;

type State = Readonly<{ pid: number; port: number }>;

const stateFile = (dir: string) => path.join(dir, 'zipkin.json');

/** Whether Zipkin answers its health check as up. */
const healthy = async (url: string): Promise<boolean> => {
  const answer = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
  return answer.ok && ((await answer.json()) as { status?: string }).status === 'UP';
};

/** One Zipkin server on loopback, started detached: another process can attach to it by its folder. */
export class ZipkinServer {
  private constructor(
    readonly dir: string,
    private readonly state: State,
  ) {}

  /** Starts Zipkin and resolves once it answers its health check as up (about 10 s on this machine). */
  static async start(options: ZipkinOptions = {}): Promise<ZipkinServer> {
    const say = options.say ?? toStderr;
    const jar = await fetchZipkin(options.version, say);
    const dir = path.resolve(options.dir ?? path.join(zipkinCacheDir(), 'local'));
    fs.mkdirSync(dir, { recursive: true });
    if (fs.existsSync(stateFile(dir))) await ZipkinServer.attach(dir).stop();
    const port = options.port || (await freePort());
    const log = fs.openSync(path.join(dir, 'zipkin.log'), 'a');
    // C1 only and the serial collector: a server beside the service on the same cores, for a test or a demo
    const args = ['-Xmx384m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-jar', jar];
    // its one port on loopback alone: Zipkin's API takes spans from anyone who reaches it
    const listen = [
      `--armeria.ports[0].ip=127.0.0.1`,
      `--armeria.ports[0].port=${port}`,
      '--armeria.ports[0].protocols[0]=http',
    ];
    const child = spawn(javaBin(), [...args, ...listen], {
      detached: true,
      stdio: ['ignore', log, log],
      env: {
        ...process.env,
        STORAGE_TYPE: 'mem',
        MEM_MAX_SPANS: String(options.maxSpans ?? 500_000),
        QUERY_PORT: String(port),
      },
    });
    fs.closeSync(log);
    child.unref();
    if (child.pid === undefined) throw new Error(`cannot start Zipkin (${javaBin()})`);
    const server = new ZipkinServer(dir, { pid: child.pid, port });
    fs.writeFileSync(stateFile(dir), JSON.stringify(server.state));
    try {
      await waitFor(
        `Zipkin on ${server.url}`,
        () => {
          if (!alive(server.state.pid)) throw new Error(`Zipkin exited; see ${path.join(dir, 'zipkin.log')}`);
          return healthy(server.url);
        },
        120_000,
      );
    } catch (error) {
      await server.stop();
      throw error;
    }
    say(
      `Zipkin ${options.version ?? DEFAULT_ZIPKIN_VERSION} is up at ${server.url} (pid ${server.state.pid})`,
    );
    return server;
  }

  /** The server a start() in `dir` left running. */
  static attach(dir: string): ZipkinServer {
    return new ZipkinServer(dir, JSON.parse(fs.readFileSync(stateFile(dir), 'utf8')) as State);
  }

  get url(): string {
    return `http://127.0.0.1:${this.state.port}`;
  }

  /** Where the service sends its spans (SECKILL_OTEL_ZIPKIN_URL). */
  get spansUrl(): string {
    return `${this.url}/api/v2/spans`;
  }

  get pid(): number {
    return this.state.pid;
  }

  /** Stops the server (its spans are kept in memory only: they go with it). */
  async stop(): Promise<void> {
    const { pid } = this.state;
    if (alive(pid)) {
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 10_000;
      while (alive(pid) && Date.now() < deadline) await sleep(100);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    fs.rmSync(stateFile(this.dir), { force: true });
  }
}

type Cli = { command: string; port: number; dir: string | undefined; version: string };

const parseCli = (argv: readonly string[]): Cli => {
  const defaults: Cli = { command: 'run', port: 9411, dir: undefined, version: DEFAULT_ZIPKIN_VERSION };
  const { command, values } = commandLine(argv, ['port', 'dir', 'version'], defaults.command);
  return {
    command,
    port: values.port === undefined ? defaults.port : Number(values.port),
    dir: values.dir,
    version: values.version ?? defaults.version,
  };
};

const main = async (argv: readonly string[]): Promise<void> => {
  const cli = parseCli(argv);
  const dir = path.resolve(cli.dir ?? path.join(zipkinCacheDir(), 'local'));
  const options = { port: cli.port, dir, version: cli.version };
  const started = (server: ZipkinServer) => {
    toStderr(`export SECKILL_OTEL_ZIPKIN_URL=${server.spansUrl}`);
    toStderr(`its UI: ${server.url}/zipkin/`);
    process.stdout.write(`${server.url}\n`);
  };
  switch (cli.command) {
    case 'fetch':
      process.stdout.write(`${await fetchZipkin(cli.version)}\n`);
      return;
    case 'start':
      started(await ZipkinServer.start(options));
      return;
    case 'stop':
      if (!fs.existsSync(stateFile(dir))) return toStderr(`no Zipkin in ${dir}`);
      await ZipkinServer.attach(dir).stop();
      toStderr(`stopped Zipkin in ${dir}`);
      return;
    case 'run': {
      const server = await ZipkinServer.start(options);
      started(server);
      toStderr('Ctrl-C stops it');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.stop();
      return;
    }
    default:
      throw new Error(`unknown command ${cli.command} (run, start, stop, fetch)`);
  }
};

if (process.argv[1]?.endsWith(path.join('zipkin', 'server.js')) ?? false) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    toStderr(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
