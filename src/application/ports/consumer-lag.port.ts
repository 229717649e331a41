import { ConsumerGroups, Topics } from './messaging.port.js';

export type GroupLag = Readonly<{ groupId: string; topic: string; lag: number }>;

/** The service's consumer groups, each on its topic: the groups whose lag is watched. */
export const WATCHED_GROUPS = [
  { groupId: ConsumerGroups.COMMIT, topic: Topics.ORDERS_RESERVED },
  { groupId: ConsumerGroups.COMPENSATION, topic: Topics.STOCK_COMPENSATION },
] as const;

/**
 * How far each consumer group is behind the end of its topic: messages published and not yet acknowledged.
 * One entry per group of `WATCHED_GROUPS`, whether or not a worker runs it now (a worker that died shows as
 * a lag that grows); 0 for a topic nobody has published to yet.
 */
export interface ConsumerLag {
  lag(): Promise<GroupLag[]>;
}
