import type { InboundMessage, MessagePublisher, OutboundMessage, Tracer } from './ports/index.js';

/** The span names the service records (docs/operations.md says what each one covers). */
export const Spans = {
  ADMISSION: 'order.admission',
  GATE: 'gate.reserve',
  RESERVE_TRANSACTION: 'reserve.transaction',
  PRODUCE: 'outbox.produce',
  RELAY_PRODUCE: 'outbox.relay',
  CONSUME: 'consume',
  COMMIT_TRANSACTION: 'commit.transaction',
  RELEASE: 'order.release',
  JOB: 'job',
} as const;

const topicsOf = (messages: readonly OutboundMessage[]): string =>
  [...new Set(messages.map((m) => m.topic))].join(',');

/**
 * A publisher whose producer requests are recorded as a span in the trace of each message sent (the traceparent
 * its outbox row kept): the dispatcher's right after commit, the relay's when it sends a row again.
 */
export const tracedPublisher = (
  publisher: MessagePublisher,
  tracer: Tracer,
  name: string,
): MessagePublisher =>
  tracer.enabled
    ? {
        publish: (message) => tracedPublish(publisher, tracer, name, [message]),
        publishMany: (messages) => tracedPublish(publisher, tracer, name, messages),
      }
    : publisher;

const tracedPublish = (
  publisher: MessagePublisher,
  tracer: Tracer,
  name: string,
  messages: readonly OutboundMessage[],
): Promise<void> =>
  tracer.batch(
    name,
    messages.map((m) => m.headers.traceparent),
    () => publisher.publishMany(messages),
    {
      kind: 'producer',
      attributes: {
        'messaging.system': 'kafka',
        'messaging.destination.name': topicsOf(messages),
        'messaging.batch.message_count': messages.length,
      },
    },
  );

/** A consumer's batch, recorded as a span in the trace of each message it handles. */
export const tracedHandler =
  (
    tracer: Tracer,
    spec: Readonly<{ topic: string; groupId: string }>,
    handle: (messages: readonly InboundMessage[]) => Promise<void>,
  ) =>
  (messages: readonly InboundMessage[]): Promise<void> =>
    tracer.batch(
      `${Spans.CONSUME} ${spec.topic}`,
      messages.map((m) => m.headers.traceparent),
      () => handle(messages),
      {
        kind: 'consumer',
        attributes: {
          'messaging.system': 'kafka',
          'messaging.destination.name': spec.topic,
          'messaging.consumer.group.name': spec.groupId,
          'messaging.batch.message_count': messages.length,
        },
      },
    );
