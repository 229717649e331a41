import {
  type Clock,
  INSTANCE_RETENTION_MS,
  type InstanceBeat,
  type InstanceRegistry,
  type InstanceSighting,
} from '../../application/index.js';

/**
 * The instances of one process (the memory profile runs one), timed by the service's clock: a test that moves
 * the clock ages them. Beats older than the retention window are dropped as they are listed.
 */
export class MemoryInstanceRegistry implements InstanceRegistry {
  private readonly beats = new Map<string, { beat: InstanceBeat; seenAtMs: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly retentionMs = INSTANCE_RETENTION_MS,
  ) {}

  beat(beat: InstanceBeat): Promise<void> {
    this.beats.set(beat.instanceId, { beat, seenAtMs: this.nowMs() });
    return Promise.resolve();
  }

  remove(instanceId: string): Promise<void> {
    this.beats.delete(instanceId);
    return Promise.resolve();
  }

  list(): Promise<InstanceSighting[]> {
    const now = this.nowMs();
    const seen: InstanceSighting[] = [];
    for (const [instanceId, { beat, seenAtMs }] of this.beats) {
      if (now - seenAtMs > this.retentionMs) this.beats.delete(instanceId);
      else
        seen.push({
          ...beat,
          lastSeenAt: new Date(seenAtMs).toISOString(),
          lastSeenAgoMs: Math.max(0, now - seenAtMs),
        });
    }
    return Promise.resolve(seen);
  }

  private nowMs(): number {
    return Date.parse(this.clock.now());
  }
}
