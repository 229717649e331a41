export interface Clock {
  /** ISO-8601 instant, UTC. */
  now(): string;
  /** Resolves after ms; a test clock may resolve at once and move time on. */
  sleep(ms: number): Promise<void>;
}

export interface IdGenerator {
  next(): string;
}

export interface Logger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export type CounterName =
  | 'order_answers'
  | 'gate_restore_failures'
  | 'reservations_outcome_unknown'
  | 'reservations_recorded'
  | 'reservation_batches'
  | 'consumer_batches'
  | 'consumer_messages'
  | 'orders_committed'
  | 'orders_released'
  | 'outbox_published'
  | 'outbox_publish_failures'
  | 'outbox_dead'
  | 'reconciliation_fixes'
  | 'reconciliation_restores'
  | 'idempotent_replays'
  | 'idempotent_recoveries';

export type GaugeName = 'outbox_rows' | 'gate_stock' | 'mysql_stock' | 'consumer_lag' | 'stock_drift';

export interface Metrics {
  count(name: CounterName, labels?: Readonly<Record<string, string>>, by?: number): void;
  /** Sets a level that can go down as well as up. */
  gauge(name: GaugeName, value: number, labels?: Readonly<Record<string, string>>): void;
}

export interface HealthCheck {
  readonly name: string;
  check(): Promise<void>;
}
