/** Reads version `from` of an event type's data as version `from + 1`. */
export type Upcaster = Readonly<{ type: string; from: number; up: (data: never) => unknown }>;

/**
 * How the events written by earlier versions of the schema (EVENT_SCHEMA_VERSIONS) are read today: the domain's
 * own history of its events, applied on read by the application's EventUpcaster.
 */
export const UPCASTERS: readonly Upcaster[] = [
  // ProductListed v2 added `requirePathToken`: a product listed before it took orders without a path token
  {
    type: 'ProductListed',
    from: 1,
    up: (data: Record<string, unknown>) => ({ ...data, requirePathToken: false }),
  },
];
