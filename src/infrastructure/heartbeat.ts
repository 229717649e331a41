import {
  checkDependencies,
  type DependencyReadiness,
  type HealthCheck,
  type InstanceBeat,
  type InstanceCounts,
  type InstanceRegistry,
  type Logger,
} from '../application/index.js';

/** Who a process is: what its beats say that never changes. */
export type InstanceIdentity = Pick<InstanceBeat, 'instanceId' | 'role' | 'pid' | 'host' | 'startedAt'>;

export type HeartbeatDeps = Readonly<{
  registry: InstanceRegistry;
  identity: InstanceIdentity;
  everyMs: number;
  /** the checks /readyz runs */
  health: readonly HealthCheck[];
  /** this process's cumulative counts, read at each beat */
  counts: () => Promise<InstanceCounts>;
  logger: Logger;
}>;

/** /readyz gives a check 2 s; a beat cannot wait that long without being late for the next one. */
const MAX_CHECK_MS = 2_000;

/**
 * Beats into the instance registry every `everyMs`, on a timer of its own and off the request path: one
 * round of the readiness checks and one registry write per beat. A beat is timed from the start of the
 * previous one (a slow one is never overlapped by the next), and its checks get most of an interval, so that a
 * dependency that hangs shows this instance degraded rather than late enough to look down. A beat that fails
 * (Redis down) is logged once per outage and never stops the process; the next one tries again.
 */
export class InstanceHeartbeat {
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;
  private running = false;
  private failing = false;
  private readonly checkMs: number;

  constructor(private readonly deps: HeartbeatDeps) {
    this.checkMs = Math.min(MAX_CHECK_MS, Math.ceil(deps.everyMs * 0.8));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    if (!this.beating) this.beatNow();
  }

  /** Stops beating and removes this instance: a process that stops cleanly is not shown down. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.beating;
    try {
      await this.deps.registry.remove(this.deps.identity.instanceId);
    } catch (error) {
      this.deps.logger.warn(
        { err: String(error) },
        'instance registry: could not remove this instance; it will be shown down, then forgotten',
      );
    }
  }

  private beatNow(): void {
    this.timer = null;
    const startedAt = performance.now();
    this.beating = this.beat().finally(() => {
      this.beating = null;
      if (!this.running) return;
      const wait = Math.max(0, this.deps.everyMs - (performance.now() - startedAt));
      // unref'd: the heartbeat never keeps a process alive that has nothing else to do
      this.timer = setTimeout(() => this.beatNow(), wait).unref();
    });
  }

  private async beat(): Promise<void> {
    const { registry, identity, everyMs, health, logger } = this.deps;
    try {
      const [outcomes, counts] = await Promise.all([
        checkDependencies(health, this.checkMs),
        this.deps.counts(),
      ]);
      const ready = Object.fromEntries(
        outcomes.map(([name, failure]): [string, DependencyReadiness] => [
          name,
          failure === null ? 'ok' : 'failing',
        ]),
      );
      await registry.beat({ ...identity, beatEveryMs: everyMs, ready, counts });
      if (this.failing) logger.info({}, 'instance registry: beats reach it again');
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        logger.warn(
          { err: String(error) },
          'instance registry: a beat failed; the dashboard will show this instance down until beats get through (said once per outage)',
        );
      this.failing = true;
    }
  }
}
