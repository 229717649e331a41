/**
 * `npm run cluster`: the service scaled out on this machine (see deployment.ts), in the foreground until
 * Ctrl-C, which stops every process it started.
 *
 *   npm run cluster [-- --apis 2] [--workers 2] [--port 8080] [--mysql mysql://root@127.0.0.1:3306/seckill_cluster] [--no-zipkin]
 *
 * MySQL is a Galera cluster of the deployment's own unless --mysql names a server. Every process traces to a
 * Zipkin server of the deployment's own, unless --no-zipkin.
 */
import { Deployment, type DeploymentOptions } from './deployment.js';

const say = (line: string) => process.stderr.write(`${line}\n`);

const parse = (argv: readonly string[]): DeploymentOptions => {
  const options: { -readonly [K in keyof DeploymentOptions]: DeploymentOptions[K] } = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    const count = (): number => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1 || n > 8)
        throw new Error(`${arg} must be a whole number from 1 to 8`);
      return n;
    };
    if (arg === '--apis') options.apis = count();
    else if (arg === '--workers') options.workers = count();
    else if (arg === '--port') options.balancerPort = Number(value());
    else if (arg === '--mysql') options.mysqlUrl = value();
    else if (arg === '--no-zipkin') options.zipkin = false;
    else throw new Error(`unknown option ${arg} (--apis N, --workers N, --port P, --mysql URL, --no-zipkin)`);
  }
  return options;
};

const main = async (): Promise<void> => {
  // traced to a Zipkin of its own unless told not to
  const options = { zipkin: true, ...parse(process.argv.slice(2)) };
  const secret = process.env['SECKILL_JWT_SECRET'];
  // the shell's settings reach every process of the deployment (SECKILL_LOG_LEVEL=debug npm run cluster)
  const shell = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[0].startsWith('SECKILL_') && entry[1] !== undefined,
    ),
  );
  let stopping = false;
  let deployment: Deployment | null = null;
  const starting = new AbortController();
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    // still starting: start() stops what it has started after the step under way, and rejects
    if (!deployment) return starting.abort();
    await deployment.stop();
    say('stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  deployment = await Deployment.start({
    ...options,
    env: shell,
    ...(secret ? { secret } : {}),
    say,
    signal: starting.signal,
  }).catch((error: unknown) => {
    if (!starting.signal.aborted) throw error;
    say('stopped');
    process.exit(130);
  });
  say('');
  say(`seckill, scaled out: ${deployment.url}  (HAProxy, round robin over the APIs)`);
  const pids = deployment.pids();
  for (const [name, pid] of Object.entries(pids)) {
    const node = deployment.nodes.find((n) => n.name === name);
    const metrics = node ? `  metrics http://127.0.0.1:${node.metricsPort}/metrics` : '';
    say(`  ${name.padEnd(16)} pid ${pid}${metrics}`);
  }
  say(
    `  MySQL ${deployment.mysqlUrl}${deployment.galera ? `  (HAProxy in front of ${deployment.galera.nodes.length} Galera nodes, one taking the writes; their data in ${deployment.galera.dir})` : ''}`,
  );
  if (deployment.zipkin)
    say(
      `  Zipkin ${deployment.zipkin.url}/zipkin/  (traces of every process, ${shell['SECKILL_OTEL_SAMPLE_RATIO'] ?? '0.1'} of new ones: SECKILL_OTEL_SAMPLE_RATIO)`,
    );
  say(`  logs and balancer configuration in ${deployment.dir}`);
  say('');
  say('In another shell:');
  // a secret the shell gave is the shell's already: it is printed only when this run made it up
  say(
    secret
      ? '  (SECKILL_JWT_SECRET as exported in this shell)'
      : `  export SECKILL_JWT_SECRET=${deployment.secret}`,
  );
  say(`  npx seckill simulate --url ${deployment.url} --buyers 2000 --stock 100`);
  say(`  open ${deployment.url}/dashboard#token=$(npx seckill token --user ops --admin)`);
  say('Ctrl-C stops everything.');
  process.stdout.write(`${deployment.url}\n`);
};

main().catch((error: unknown) => {
  say(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
