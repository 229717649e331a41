export type GroupLag = Readonly<{ groupId: string; topic: string; lag: number }>;

/** How far each consumer group is behind the end of its topic: messages published and not yet acknowledged. */
export interface ConsumerLag {
  lag(): Promise<GroupLag[]>;
}
export const CONSUMER_LAG = Symbol.for('seckill.ConsumerLag');
