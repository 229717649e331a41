/**
 * Who used the CPU during a measured load: each process of the run from /proc/<pid>/stat, and the whole
 * machine from /proc/stat, so that "other" (anything else running here) shows too. Linux only; elsewhere
 * the figures are empty.
 */
import { readdir, readFile } from 'node:fs/promises';
import { cpus } from 'node:os';

/** clock ticks per second of /proc's counters (USER_HZ, 100 on Linux) */
const TICKS = 100;

export type Probe = Readonly<{ name: string; pid: number | undefined }>;
type Snapshot = Readonly<{
  at: number;
  ticks: ReadonlyMap<string, number>;
  /** every process of the machine, by pid */
  everyone: ReadonlyMap<number, number>;
  busy: number;
  total: number;
}>;
/** cores used over the interval, by process name, plus `other` and `machine` (everything busy) */
export type CpuUse = Readonly<Record<string, number>>;
/** the processes outside the probes that used the most CPU over the interval: "command line: cores" */
export type Others = readonly string[];

const processTicks = async (pid: number): Promise<number | null> => {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // the fields after "(comm)": state is the first, utime the 12th, stime the 13th
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
};

const machineTicks = async (): Promise<{ busy: number; total: number }> => {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const total = values.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
};

const everyProcess = async (): Promise<Map<number, number>> => {
  const everyone = new Map<number, number>();
  const entries = await readdir('/proc').catch(() => [] as string[]);
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const t = await processTicks(Number(entry));
    if (t !== null) everyone.set(Number(entry), t);
  }
  return everyone;
};

export const snapshot = async (probes: readonly Probe[]): Promise<Snapshot> => {
  const ticks = new Map<string, number>();
  for (const probe of probes) {
    const t = probe.pid === undefined ? null : await processTicks(probe.pid);
    // probes of one name add up (the three brokers of the Kafka cluster are one column)
    if (t !== null) ticks.set(probe.name, (ticks.get(probe.name) ?? 0) + t);
  }
  return { at: performance.now(), ticks, everyone: await everyProcess(), ...(await machineTicks()) };
};

const commandOf = async (pid: number): Promise<string> => {
  const line = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const text = line.replaceAll('\0', ' ').trim();
  if (text) return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return /\(([^)]*)\)/.exec(stat)?.[1] ?? `pid ${pid}`;
};

/** The three processes outside `probes` that used the most CPU between the snapshots (≥ 0.05 core). */
export const othersBetween = async (
  before: Snapshot,
  after: Snapshot,
  probes: readonly Probe[],
): Promise<Others> => {
  const seconds = (after.at - before.at) / 1000;
  const probed = new Set(probes.map((p) => p.pid));
  const used = [...after.everyone]
    .filter(([pid]) => !probed.has(pid) && pid !== process.pid)
    // a process born during the interval spent all its ticks in it
    .map(([pid, t]) => [pid, (t - (before.everyone.get(pid) ?? 0)) / TICKS / seconds] as const)
    .filter(([, cores]) => cores >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3);
  return Promise.all(used.map(async ([pid, cores]) => `${await commandOf(pid)}: ${round(cores)}`));
};

const round = (n: number) => Math.round(n * 100) / 100;

/** Cores each process used between two snapshots; `machine` is all busy cores, `other` what no probe explains. */
export const cpuBetween = (before: Snapshot, after: Snapshot): CpuUse => {
  const seconds = (after.at - before.at) / 1000;
  if (seconds <= 0 || after.total <= before.total) return {};
  const use: Record<string, number> = {};
  let known = 0;
  for (const [name, t] of after.ticks) {
    const start = before.ticks.get(name);
    if (start === undefined) continue;
    const cores = (t - start) / TICKS / seconds;
    use[name] = round(cores);
    known += cores;
  }
  const machine = ((after.busy - before.busy) / (after.total - before.total)) * cpus().length;
  use['other'] = round(Math.max(0, machine - known));
  use['machine'] = round(machine);
  return use;
};
