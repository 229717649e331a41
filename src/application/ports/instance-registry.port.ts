/** What a process of the service runs: the HTTP API (`serve`), the worker (`worker`), or both (`all`). */
export type InstanceRole = 'api' | 'worker' | 'all';

/** A dependency's last readiness check, as `/readyz` words it. */
export type DependencyReadiness = 'ok' | 'failing';

/** What one process has done since it started (cumulative: a reader takes the rate from two beats). */
export type InstanceCounts = Readonly<{
  /** order requests answered 202 */
  accepted: number;
  /** order requests refused with a 4xx (sold out, limit, duplicate, budgets, bad input) */
  rejected: number;
  /** order requests answered with a 5xx (a dependency failed) */
  failed: number;
  /** orders whose stock this process's commit consumer committed in MySQL */
  committed: number;
  /** reservations this process's commit consumer released (MySQL refused them) */
  released: number;
}>;

/** What a process says about itself on every beat. */
export type InstanceBeat = Readonly<{
  /** stable for the life of the process: host:pid:random */
  instanceId: string;
  role: InstanceRole;
  pid: number;
  host: string;
  startedAt: string;
  /** how often it beats: a reader judges it down once it has missed about three */
  beatEveryMs: number;
  /** each dependency's last check (empty on the memory profile, which has none) */
  ready: Readonly<Record<string, DependencyReadiness>>;
  counts: InstanceCounts;
}>;

/** A beat as the registry last saw it. */
export type InstanceSighting = InstanceBeat &
  Readonly<{
    /** when the registry took the last beat, by the registry's clock */
    lastSeenAt: string;
    /** how long ago that was, by the same clock (so that hosts whose clocks differ are judged alike) */
    lastSeenAgoMs: number;
  }>;

/**
 * Where every process of a deployment says it is alive, so that one dashboard shows them all. A beat replaces
 * the instance's previous one; an instance that stops beating stays listed, with its age, until the retention
 * window has passed, so that a killed process is still on the page; one that stops cleanly removes itself.
 */
export interface InstanceRegistry {
  beat(beat: InstanceBeat): Promise<void>;
  remove(instanceId: string): Promise<void>;
  /** every instance seen within the retention window, in no particular order */
  list(): Promise<InstanceSighting[]>;
}

/** How long an instance that stopped beating stays listed, by default. */
export const INSTANCE_RETENTION_MS = 10 * 60_000;
