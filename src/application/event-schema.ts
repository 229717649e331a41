import { type DomainEvent, EVENT_SCHEMA_VERSIONS, type Upcaster, UPCASTERS } from '../domain/index.js';
import type { StoredEvent } from './ports/index.js';

/** An event as a store row holds it: its type, the schema version it was written with, its data. */
export type RawEvent = Readonly<{ type: string; schemaVersion: number; data: unknown }>;

export type { Upcaster };

export class UnknownEventSchema extends Error {
  constructor(raw: RawEvent, current: number | undefined) {
    super(
      current === undefined
        ? `unknown event type ${raw.type}`
        : `${raw.type} v${raw.schemaVersion} cannot be read as v${current}`,
    );
    this.name = 'UnknownEventSchema';
  }
}

/**
 * The upcasting seam: the event stores hand every row through `read`, so the domain only ever sees the
 * current shape of an event. Upcasters chain: v1 → v2 → v3.
 */
export class EventUpcaster {
  private readonly upcasters = new Map<string, Upcaster['up']>();

  constructor(
    upcasters: readonly Upcaster[] = [],
    private readonly current: Readonly<Record<string, number>> = EVENT_SCHEMA_VERSIONS,
  ) {
    for (const u of upcasters) this.upcasters.set(`${u.type}@${u.from}`, u.up);
  }

  /** The version an event type is written with now. */
  versionOf(type: string): number {
    return this.current[type] ?? 1;
  }

  read(raw: RawEvent): DomainEvent {
    const current = this.current[raw.type];
    if (current === undefined || raw.schemaVersion > current) throw new UnknownEventSchema(raw, current);
    let data = raw.data;
    for (let version = raw.schemaVersion; version < current; version += 1) {
      const up = this.upcasters.get(`${raw.type}@${version}`);
      if (!up) throw new UnknownEventSchema(raw, current);
      data = up(data as never);
    }
    return { type: raw.type, data } as DomainEvent;
  }
}

/** A stored event as the domain reads it today (the same object when it is current). */
export const upcastStored = (schema: EventUpcaster, stored: StoredEvent): StoredEvent => {
  const current = schema.versionOf(stored.event.type);
  if (stored.schemaVersion === current) return stored;
  const raw = { type: stored.event.type, schemaVersion: stored.schemaVersion, data: stored.event.data };
  return { ...stored, schemaVersion: current, event: schema.read(raw) };
};

/** The schema as this build of the service writes and reads it. */
export const defaultUpcaster = new EventUpcaster(UPCASTERS);
