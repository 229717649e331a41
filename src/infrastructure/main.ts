import { Command, InvalidArgumentError } from 'commander';
import { JwtTokens, USER_ID } from '../adapters/http/tokens.js';
import { migrate, openMySql } from '../adapters/mysql/mysql-orm.js';
import { type Config, ConfigError, isLoopback, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { rebuildProjections } from './projections.js';
import { demoBanner, listDemoProduct } from './demo.js';
import { type Roles, SeckillService } from './service.js';
import { runSimulation, type SimulationOptions } from '../client/simulate.js';

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
};

const say = (line: string) => process.stdout.write(`${line}\n`);

const run = async (roles: Roles, command: string): Promise<void> => {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  if (config.usingDevelopmentSecret)
    logger.warn(
      { host: config.host },
      `!!! SECKILL_JWT_SECRET is not set: using the fixed DEVELOPMENT secret. Anyone can mint tokens. Listening on ${config.host} only: set SECKILL_JWT_SECRET to serve other machines. Never run it like this in production. !!!`,
    );
  let effective = roles;
  if (config.profile === 'memory' && command === 'serve') {
    logger.warn(
      {},
      'memory profile: nothing is shared between processes, so serve runs the pipeline in this process too',
    );
    effective = { http: true, worker: true };
  }
  if (config.profile === 'memory' && command === 'worker')
    logger.warn({}, 'memory profile: this worker shares nothing with other processes; use `seckill all`');
  const service = await SeckillService.start(config, effective, logger);
  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await service.close();
    process.exit(0);
  };
  process.once('SIGINT', (s) => void stop(s));
  process.once('SIGTERM', (s) => void stop(s));
  if (!effective.http) {
    logger.info({ profile: config.profile }, 'worker running');
    return;
  }
  logger.info({ url: service.url, host: config.host, profile: config.profile }, 'seckill API listening');
  if (config.demoProduct) {
    const productId = await listDemoProduct(service.app.products);
    for (const line of demoBanner(config, service.url, productId)) say(line);
  }
};

type AuditReport = {
  ok: boolean;
  eventsReplayed: number;
  violations: Array<{ kind: string; detail: string }>;
  products: unknown[];
};

/**
 * Where a command sends an admin token it signs: https anywhere, plain http to this machine only (the token
 * would cross the network readable by anyone on the way).
 */
const adminTarget = (url: string, option: string): string => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${option} ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol === 'https:') return url;
  if (parsed.protocol === 'http:' && isLoopback(parsed.hostname)) return url;
  throw new ConfigError(
    `${option} ${url}: this command sends an admin token there; use https:// for a service on another machine (plain http only to this machine)`,
  );
};

/** The memory profile keeps its event store inside the serving process: ask that process over HTTP. */
const auditOverHttp = async (config: Config, url: string): Promise<AuditReport> => {
  const token = await new JwtTokens(config.jwtSecret, config.tokenPolicy).sign(
    { userId: 'seckill-cli', role: 'admin' },
    300,
  );
  const response = await fetch(`${adminTarget(url, '--url')}/api/v1/admin/audit`, {
    headers: { authorization: `Bearer ${token}` },
  }).catch((error: unknown) => {
    throw new ConfigError(`no seckill service answers at ${url} (${String(error)}); start it with npm start`);
  });
  if (!response.ok)
    throw new ConfigError(`the audit endpoint answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as AuditReport;
};

/** The real profile replays MySQL's event store right here, and compares with MySQL and Redis. */
const auditInProcess = async (config: Config): Promise<AuditReport> => {
  const service = await SeckillService.start(config, { http: false, worker: false }, createLogger('warn'));
  try {
    return await service.app.audit.run();
  } finally {
    await service.close();
  }
};

const audit = async (options: { json?: boolean; url?: string }): Promise<number> => {
  const config = loadConfig();
  const source = config.profile === 'memory' ? (options.url ?? config.serviceUrl) : 'the event store';
  const report =
    config.profile === 'memory' ? await auditOverHttp(config, source) : await auditInProcess(config);
  if (options.json) say(JSON.stringify(report, null, 2));
  else {
    say(`audit of ${source}: ${report.eventsReplayed} events replayed, ${report.products.length} products`);
    for (const v of report.violations) say(`  VIOLATION ${v.kind}: ${v.detail}`);
    say(report.ok ? 'audit: clean' : `audit: ${report.violations.length} violation(s)`);
  }
  return report.ok ? 0 : 1;
};

const program = new Command('seckill').description('Flash-sale order service').showHelpAfterError();

program
  .command('serve')
  .description('run the HTTP API')
  .action(() => run({ http: true, worker: false }, 'serve'));
program
  .command('worker')
  .description('run the consumers and scheduled jobs')
  .action(() => run({ http: false, worker: true }, 'worker'));
program
  .command('all')
  .description('run the API and the worker in one process')
  .action(() => run({ http: true, worker: true }, 'all'));
program
  .command('migrate')
  .description('create the database named in SECKILL_MYSQL_URL if needed and apply pending migrations')
  .action(async () => {
    const config = loadConfig();
    const orm = await openMySql({ url: config.mysqlUrl, ...config.mysql });
    try {
      const applied = await migrate(orm);
      say(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'the schema is up to date');
    } finally {
      await orm.close(true);
    }
  });
program
  .command('audit')
  .description('replay the event store and check that nothing was oversold; exit 1 on any violation')
  .option('--json', 'print the report as JSON')
  .option('--url <url>', 'the running service (memory profile)')
  .action(async (options: { json?: boolean; url?: string }) => {
    process.exitCode = await audit(options);
  });
program
  .command('projections')
  .description('read models kept from the event store')
  .command('rebuild')
  .description(
    'replay the event store into fresh orders tables and compare them with the live ones; exit 1 if they differ',
  )
  .option('--resume', 'go on from the checkpoint of a rebuild that stopped')
  .option('--swap', 'put the rebuilt tables in place of the live ones (stop the service first)')
  .option('--json', 'print the report as JSON')
  .action(async (options: { resume?: boolean; swap?: boolean; json?: boolean }) => {
    const config = loadConfig();
    const report = await rebuildProjections(config, createLogger('warn'), options);
    const { comparison: c } = report;
    if (options.json) say(JSON.stringify(report, null, 2));
    else {
      say(
        `replayed ${report.eventsRead} events up to position ${report.checkpoint}: ${report.ordersWritten} order rows written`,
      );
      say(
        `orders: ${c.liveRows} live rows, ${c.rebuiltRows} rebuilt, ${c.differing} differing${c.sample.length > 0 ? ` (e.g. ${c.sample.join(', ')})` : ''}`,
      );
      say(
        report.swapped
          ? 'the rebuilt tables are now the live ones'
          : c.differing === 0
            ? 'projections: equal'
            : 'projections: DIFFER',
      );
    }
    process.exitCode = c.differing === 0 || report.swapped ? 0 : 1;
  });
program
  .command('token')
  .description('print a signed bearer token (and nothing else) on stdout')
  .requiredOption('--user <id>', 'the user id (the token subject)')
  .option('--admin', 'give the token the admin role')
  .option('--ttl <seconds>', 'lifetime in seconds (at most SECKILL_JWT_MAX_TTL_SECONDS)', positiveInt, 3600)
  .action(async (options: { user: string; admin?: boolean; ttl: number }) => {
    const config = loadConfig();
    if (!USER_ID.test(options.user))
      throw new ConfigError(
        `--user ${JSON.stringify(options.user)}: the service accepts user ids of 1 to 64 letters, digits and _ . : @ - only`,
      );
    if (config.usingDevelopmentSecret)
      process.stderr.write(
        'seckill token: signed with the public development secret (SECKILL_JWT_SECRET is unset): a service with a secret of its own refuses it\n',
      );
    const { maxTtlSeconds } = config.tokenPolicy;
    if (options.ttl > maxTtlSeconds)
      throw new ConfigError(
        `--ttl ${options.ttl} is longer than the service accepts: tokens may live at most ${maxTtlSeconds} s (SECKILL_JWT_MAX_TTL_SECONDS)`,
      );
    const token = await new JwtTokens(config.jwtSecret, config.tokenPolicy).sign(
      { userId: options.user, role: options.admin ? 'admin' : 'user' },
      options.ttl,
    );
    say(token);
  });
program
  .command('simulate')
  .description('run a flash sale against a running service and report what happened')
  .option('--url <url>', 'the running service')
  .option('--buyers <n>', 'number of distinct buyers', positiveInt, 1000)
  .option('--stock <n>', 'units on sale', positiveInt, 100)
  .option('--per-user-limit <n>', 'units one buyer may hold', positiveInt, 1)
  .option('--clicks <n>', 'requests each buyer sends', positiveInt, 2)
  .option('--connections <n>', 'concurrent connections', positiveInt, 64)
  .option('--no-path-token', 'list the product without a sale path token: orders go without one')
  .option('--json', 'print the report as JSON')
  .action(async (options: Omit<SimulationOptions, 'url' | 'secret'> & { url?: string }) => {
    const config = loadConfig();
    const report = await runSimulation({
      ...options,
      url: adminTarget(options.url ?? config.serviceUrl, '--url'),
      secret: config.jwtSecret,
      tokenPolicy: config.tokenPolicy,
    });
    // 1 on oversell, a buyer over the limit, a failed audit, undecided orders or unanswered requests
    process.exitCode = report.ok ? 0 : 1;
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`seckill: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
