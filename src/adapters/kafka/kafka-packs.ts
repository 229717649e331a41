import type { KafkaMessage, Message } from 'kafkajs';
import type { InboundMessage, OutboundMessage } from '../../application/index.js';

/**
 * Messages of one topic and one key (one product) published together travel as one Kafka record, a pack: the
 * record's value lists each message's payload and headers, and the header `seckill-pack` says so. KafkaJS
 * encodes and decodes a record with an allocation per header and field, which cost the API more CPU per order
 * than anything else it adds to a request; a pack costs that once for up to PACK_MAX_MESSAGES orders, and the
 * commit consumer gets the orders of a product together, as it merges them. Order within a key is kept; a
 * message alone is a plain record, as the outbox relay and older processes send them, and both are read.
 */
export const PACK_HEADER = 'seckill-pack';
const PACK_MAX_MESSAGES = 500;
/** about this many characters of payloads and headers at most in one pack (Kafka's default record limit is 1 MB) */
const PACK_MAX_CHARS = 512 * 1024;

type Packed = Readonly<{
  messages: ReadonlyArray<Readonly<{ payload: string; headers: Record<string, string> }>>;
}>;

const plain = (m: OutboundMessage): Message => ({ key: m.key, value: m.payload, headers: { ...m.headers } });

const sizeOf = (m: OutboundMessage): number => {
  let size = m.payload.length + 32;
  for (const name in m.headers) size += name.length + (m.headers[name]?.length ?? 0) + 6;
  return size;
};

const packOf = (key: string, messages: readonly OutboundMessage[]): Message =>
  messages.length === 1
    ? plain(messages[0]!)
    : {
        key,
        value: JSON.stringify({
          messages: messages.map((m) => ({ payload: m.payload, headers: m.headers })),
        } satisfies Packed),
        headers: { [PACK_HEADER]: '1' },
      };

/** The records of one topic's messages: a pack per key and run of at most the pack's limits, in their order. */
export const recordsOf = (messages: readonly OutboundMessage[]): Message[] => {
  const byKey = new Map<string, OutboundMessage[]>();
  for (const m of messages) {
    const list = byKey.get(m.key);
    if (list) list.push(m);
    else byKey.set(m.key, [m]);
  }
  const records: Message[] = [];
  for (const [key, list] of byKey) {
    let pack: OutboundMessage[] = [];
    let chars = 0;
    for (const m of list) {
      const size = sizeOf(m);
      if (pack.length > 0 && (pack.length >= PACK_MAX_MESSAGES || chars + size > PACK_MAX_CHARS)) {
        records.push(packOf(key, pack));
        pack = [];
        chars = 0;
      }
      pack.push(m);
      chars += size;
    }
    if (pack.length > 0) records.push(packOf(key, pack));
  }
  return records;
};

const headerText = (value: Buffer | string | (Buffer | string)[] | undefined): string | undefined => {
  if (value === undefined) return undefined;
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
};

const isPacked = (value: unknown): value is Packed =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as Packed).messages) &&
  (value as Packed).messages.every(
    (m) => typeof m?.payload === 'string' && typeof m.headers === 'object' && m.headers !== null,
  );

/** A record's messages: itself, or the messages of its pack (they share its partition and offset). */
export const messagesOf = (
  topic: string,
  partition: number,
  record: KafkaMessage,
): InboundMessage[] | Readonly<{ unreadable: string }> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    const text = headerText(value);
    if (text !== undefined) headers[name] = text;
  }
  const key = record.key?.toString() ?? '';
  const value = record.value?.toString() ?? '';
  const { offset } = record;
  if (headers[PACK_HEADER] === undefined) return [{ topic, partition, offset, key, payload: value, headers }];
  let packed: unknown;
  try {
    packed = JSON.parse(value);
  } catch (error) {
    return { unreadable: String(error) };
  }
  if (!isPacked(packed)) return { unreadable: 'not a pack of messages' };
  return packed.messages.map((m) => ({
    topic,
    partition,
    offset,
    key,
    payload: m.payload,
    headers: { ...m.headers },
  }));
};
