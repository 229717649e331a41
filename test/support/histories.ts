import {
  type AuditedEvent,
  type DomainEvent,
  isOrderEvent,
  orderStreamId,
  productStreamId,
} from '../../src/domain/index.js';

/** Numbers events 1, 2, 3… in the given order, as the global log would, each at the next version of its stream. */
export const numbered = (events: readonly DomainEvent[]): AuditedEvent[] => {
  const versions = new Map<string, number>();
  return events.map((event, index) => {
    const streamId = isOrderEvent(event)
      ? orderStreamId(event.data.orderId)
      : productStreamId(event.data.productId);
    const streamVersion = (versions.get(streamId) ?? 0) + 1;
    versions.set(streamId, streamVersion);
    return { position: index + 1, streamId, streamVersion, event };
  });
};

/**
 * The audit's thread script as built: tests run from source, beside which there is no script for a thread to
 * load (`npm test` builds dist/ first).
 */
export const BUILT_FOLD_THREAD = new URL(
  '../../dist/src/adapters/system/history-fold-thread.js',
  import.meta.url,
);
