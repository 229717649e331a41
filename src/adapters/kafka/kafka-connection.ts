import { type Admin, Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Logger } from '../../application/index.js';

export type KafkaOptions = Readonly<{
  brokers: readonly string[];
  clientId?: string;
  /** a broker request without an answer by then fails (a frozen broker never hangs a caller for long) */
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
}>;

/**
 * Whether `error`, or an error it wraps, matches: KafkaJS wraps what its retries gave up on, in `cause` or
 * `originalError`.
 */
export const kafkaErrorMatches = (
  error: unknown,
  match: (error: Readonly<Record<string, unknown>>) => boolean,
  depth = 0,
): boolean => {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const fields = error as Record<string, unknown>;
  return (
    match(fields) ||
    kafkaErrorMatches(fields['cause'], match, depth + 1) ||
    kafkaErrorMatches(fields['originalError'], match, depth + 1)
  );
};

/**
 * KafkaJS warns about every idempotent producer whose retries are bounded. They are on purpose: a send that
 * keeps failing is left to the outbox relay instead of holding the publisher forever.
 */
const EXPECTED = new Set(['Limiting retries for the idempotent producer may invalidate EoS guarantees']);

/** KafkaJS with its logs sent to the service's logger (warnings and errors only). */
export const createKafka = (options: KafkaOptions, logger: Logger): Kafka =>
  new Kafka({
    clientId: options.clientId ?? 'seckill',
    brokers: [...options.brokers],
    requestTimeout: options.requestTimeoutMs ?? 5_000,
    connectionTimeout: options.connectionTimeoutMs ?? 2_000,
    retry: { initialRetryTime: 100, retries: 5, maxRetryTime: 2_000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ namespace, level, log }: LogEntry) => {
        const { message, ...details } = log;
        if (EXPECTED.has(message)) return;
        const entry = { kafka: namespace, ...details };
        if (level <= logLevel.ERROR) logger.error(entry, `kafka: ${message}`);
        else logger.warn(entry, `kafka: ${message}`);
      },
  });

/**
 * One admin client, connected on first use and shared by its callers. Closing refuses new work, waits for a
 * connection under way and for the work in flight, then disconnects: KafkaJS goes on connecting a client
 * disconnected meanwhile, and a request still running after the disconnect connects its broker again — either
 * way, sockets that hold the process open.
 */
export class SharedAdmin {
  private admin: Promise<Admin> | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly kafka: Kafka) {}

  /** Runs work on the admin client, connecting it first if need be; refused once closing has begun. */
  use<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the Kafka admin client is closed'));
    const running = this.connected().then(work);
    this.inFlight.add(running);
    const forget = () => this.inFlight.delete(running);
    running.then(forget, forget);
    return running;
  }

  /** After an error the client is let go, and the next use connects a new one. */
  drop(): void {
    const old = this.admin;
    this.admin = null;
    void old?.then((admin) => admin.disconnect()).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    const old = this.admin;
    this.admin = null;
    const admin = await old?.catch(() => null);
    await admin?.disconnect();
  }

  private connected(): Promise<Admin> {
    if (this.admin) return this.admin;
    const admin = this.kafka.admin();
    const connected = admin.connect().then(
      () => admin,
      (error: unknown) => {
        if (this.admin === connected) this.admin = null;
        throw error;
      },
    );
    this.admin = connected;
    return connected;
  }
}
