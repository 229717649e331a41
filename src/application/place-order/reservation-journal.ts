import type { ReserveOrder } from '../../domain/index.js';
import type { CommandItem } from '../command-handler.js';
import { GroupCommit, type GroupCommitOptions } from '../group-commit.js';
import type { OrderCommands } from '../order-stream.js';
import {
  type Clock,
  CommitOutcomeUnknown,
  InfrastructureUnavailable,
  type Logger,
  type Metrics,
  type StockGate,
  type Tracer,
} from '../ports/index.js';
import { Spans } from '../traced-messaging.js';
import type { PlaceOrderCommand } from './answers.js';

export type ReservationJournalDeps = Readonly<{
  orders: OrderCommands;
  /** where a reservation that could not be recorded gives its unit back */
  gate: Pick<StockGate, 'restore'>;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  groupCommit: GroupCommitOptions;
  tracer: Tracer;
}>;

/** A reservation the gate accepted: the command that starts the order's stream. */
type Reservation = CommandItem<ReserveOrder>;

/**
 * Where reservations become orders in MySQL: those that pass the gate at about the same time share one
 * transaction (group commit), and each buyer is answered when that transaction has committed. The broker is
 * never awaited: the outbox row makes the reservation durable, and the dispatcher publishes it after commit.
 */
export class ReservationJournal {
  private readonly batches: GroupCommit<Reservation>;

  constructor(private readonly deps: ReservationJournalDeps) {
    this.batches = new GroupCommit((batch) => this.write(batch), deps.groupCommit);
  }

  /** Resolves once every reservation handed over so far has been written or has failed. */
  settled(): Promise<void> {
    return this.batches.settled();
  }

  /**
   * Records a reservation the gate has just taken. When its batch fails, the unit goes back to the gate and the
   * buyer's key is forgotten (the retry is asked afresh), and the buyer gets InfrastructureUnavailable. When
   * the batch's commit went unanswered, it may have landed: the gate keeps the unit and the key, so a repeat with
   * the key gets this order (recorded then if it never was); a reservation that never landed and is not
   * repeated in time is given back by reconciliation, after which a repeat with the key is a new order.
   */
  async record(cmd: PlaceOrderCommand, orderId: string): Promise<void> {
    try {
      await this.batches.submit(this.reservation(cmd, orderId, true));
    } catch (error) {
      if (error instanceof CommitOutcomeUnknown) this.deps.metrics.count('reservations_outcome_unknown');
      else await this.restoreGate(cmd, orderId);
      throw unavailable(error);
    }
  }

  /**
   * Records a reservation that its first try took in the gate and may never have recorded (it died between the
   * two): the decider makes nothing of an order that exists. The unit is the first try's, never given back here.
   */
  async recordRepeat(cmd: PlaceOrderCommand, orderId: string): Promise<void> {
    try {
      await this.batches.submit(this.reservation(cmd, orderId, false));
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** The command that starts the order: the domain decides its first event when the batch is written. */
  private reservation(cmd: PlaceOrderCommand, orderId: string, isNew: boolean): Reservation {
    const now = this.deps.clock.now();
    const { productId, userId, quantity, correlationId } = cmd;
    return {
      command: { type: 'ReserveOrder', orderId, productId, userId, quantity, now },
      // the buyer's request is both the conversation and the cause of the order's first event
      context: {
        occurredAt: now,
        correlationId,
        causationId: correlationId,
        userId,
        // the buyer's trace (when sampled), kept with the order's first event and sent with its message
        ...(cmd.traceparent === undefined ? {} : { traceparent: cmd.traceparent }),
      },
      isNew,
    };
  }

  /**
   * One transaction for a batch, through the command handler: the decider makes each order's first event (a
   * new stream: nothing to read), and a multi-row insert each goes to the event store, the orders
   * projection and the outbox.
   */
  private async write(batch: readonly Reservation[]): Promise<void> {
    const write = () => this.deps.orders.write((tx) => tx.decide(batch));
    const { tracer } = this.deps;
    if (tracer.enabled)
      await tracer.batch(Spans.RESERVE_TRANSACTION, batch.map(traceOf), write, {
        kind: 'client',
        attributes: { 'seckill.batch.orders': batch.length },
      });
    else await write();
    this.deps.metrics.count('reservations_recorded', {}, batch.length);
    this.deps.metrics.count('reservation_batches');
  }

  /** The gate given back, and the buyer's key forgotten: the reservation was never recorded. */
  private async restoreGate(cmd: PlaceOrderCommand, orderId: string): Promise<void> {
    const { productId, userId, idempotencyKey: key } = cmd;
    try {
      await this.deps.gate.restore(productId, orderId, key === undefined ? undefined : { userId, key });
    } catch (error) {
      // An under-counted gate loses a sale; it never oversells. Reconciliation gives the unit back.
      this.deps.metrics.count('gate_restore_failures');
      this.deps.logger.error(
        { productId, orderId, err: String(error) },
        'gate restore failed after a failed transaction',
      );
    }
  }
}

const traceOf = (reservation: Reservation): string | undefined =>
  typeof reservation.context === 'function' ? undefined : reservation.context.traceparent;

const unavailable = (error: unknown): InfrastructureUnavailable =>
  error instanceof InfrastructureUnavailable
    ? error
    : new InfrastructureUnavailable('database', 'the reservation could not be recorded', { cause: error });
