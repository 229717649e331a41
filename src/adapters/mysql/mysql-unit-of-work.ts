import type { Knex, MikroORM } from '@mikro-orm/mysql';
import {
  CommitOutcomeUnknown,
  InfrastructureUnavailable,
  type TransactionalStores,
  type UnitOfWork,
} from '../../application/index.js';
import { isDeadlock, translate } from './mysql-errors.js';
import { MySqlEventStore } from './mysql-event-store.js';
import { MySqlInventory } from './mysql-inventory.js';
import { MySqlOrderReadModel } from './mysql-order-read-model.js';
import { MySqlOutbox } from './mysql-outbox.js';
import { type MySqlSession, transactionSession, withDeadline } from './mysql-session.js';
import { type DriverConnection, type SqlStatements, statementsOn } from './mysql-sql.js';

/** The client of the knex transaction MikroORM opens: it hands out the transaction's own driver connection. */
type TransactionClient = Readonly<{ acquireConnection(): Promise<DriverConnection> }>;

/**
 * One transaction per call on a forked EntityManager: events, read model, outbox and stock commit together
 * or not at all. The stores get the transaction's EntityManager and its driver connection, nothing else, so
 * every statement runs on the one connection the transaction holds. A transaction that outlives its
 * deadline fails the caller with the unavailable error and rolls back at its next step instead of
 * committing late. A transaction InnoDB picks as a deadlock victim, or Galera's certification refuses at commit
 * (the same error: another node's write came first), runs again (the work reads what it decides on inside the
 * transaction, so a second run decides afresh); one that keeps conflicting is unavailable. A commit sent and
 * never answered (the connection cut, the deadline passed meanwhile) is CommitOutcomeUnknown: it may have landed.
 * A commit answered is the transaction's outcome, whatever the clock says by then.
 */
export class MySqlUnitOfWork implements UnitOfWork {
  constructor(
    private readonly orm: MikroORM,
    private readonly timeoutMs: number,
    private readonly deadlockRetries = 2,
  ) {}

  async run<T>(work: (stores: TransactionalStores) => Promise<T>): Promise<T> {
    const expiresAt = Date.now() + this.timeoutMs;
    const commit: CommitState = { sent: false };
    const attempts = async (): Promise<T> => {
      for (let retry = 0; ; retry += 1) {
        try {
          return await this.once(work, expiresAt, commit);
        } catch (error) {
          if (!isDeadlock(error)) throw error;
          if (retry >= this.deadlockRetries || Date.now() > expiresAt)
            throw new InfrastructureUnavailable('database', 'the transaction kept conflicting with others', {
              cause: error,
            });
        }
      }
    };
    try {
      return await withDeadline('transaction', this.timeoutMs, attempts());
    } catch (error) {
      // the caller is answered now: an attempt still running must never send its commit after this
      commit.abandoned = true;
      // the deadline passed while a commit was on its way: it may land after this answer
      if (commit.sent && !(error instanceof CommitOutcomeUnknown))
        throw new CommitOutcomeUnknown('database', `no answer to the commit: ${String(error)}`, {
          cause: error,
        });
      return translate(error, 'transaction');
    }
  }

  private once<T>(
    work: (stores: TransactionalStores) => Promise<T>,
    expiresAt: number,
    commit: CommitState,
  ): Promise<T> {
    return inTransaction(this.orm, expiresAt, this.timeoutMs, commit, (session) =>
      work({
        events: new MySqlEventStore(session),
        orders: new MySqlOrderReadModel(session),
        outbox: new MySqlOutbox(session),
        inventory: new MySqlInventory(session),
      }),
    );
  }
}

/**
 * Where a transaction's commit is: `sent` while it is on its way (sent, not answered yet), `abandoned` once the
 * caller was told the transaction failed (it must not be sent after that).
 */
export type CommitState = { sent: boolean; abandoned?: boolean };

/**
 * One transaction on a forked EntityManager, with a session bound to its one connection; committed when the
 * work resolves before the deadline, rolled back otherwise.
 *
 * The stores queue their statements on the connection without waiting for each other, and InnoDB ends a
 * transaction it picks as a deadlock victim (Galera's brute-force abort does the same) at the statement refused:
 * with autocommit on, each statement queued behind it would then commit on its own — an order's row without its
 * events, an outbox row marked consumed without its decision. So the transaction runs with autocommit off:
 * what runs after such a refusal is a transaction of its own, which the rollback that follows the error throws
 * away. Autocommit is back on before the connection returns to the pool.
 */
export const inTransaction = async <T>(
  orm: MikroORM,
  expiresAt: number,
  timeoutMs: number,
  commit: CommitState,
  work: (session: MySqlSession) => Promise<T>,
): Promise<T> => {
  const em = orm.em.fork();
  // begin/commit rather than em.transactional: the latter opens an AsyncLocalStorage context, which puts
  // a hook on every promise and timer of the process from then on
  await em.begin();
  let sql: SqlStatements | null = null;
  try {
    const transaction = em.getTransactionContext<Knex.Transaction>();
    if (!transaction) throw new Error('MikroORM opened no transaction');
    const connection = await (transaction.client as TransactionClient).acquireConnection();
    sql = statementsOn(connection);
    // queued ahead of the work's statements, answered before the commit
    const autocommitOff = sql.query('SET autocommit = 0', []);
    autocommitOff.catch(() => undefined);
    const session = transactionSession({ em, sql }, expiresAt, timeoutMs);
    const result = await work(session);
    await autocommitOff;
    // never commit after the deadline: the caller has been told the transaction failed
    await session.run('commit', () => Promise.resolve());
    // no await between this check and the commit's sending: an answered caller's transaction never commits
    if (commit.abandoned) throw new Error('the transaction was abandoned at its deadline');
    commit.sent = true;
    try {
      await Promise.all([sql.query('COMMIT', []), sql.query('SET autocommit = 1', [])]);
    } catch (error) {
      // refused (a deadlock victim, Galera's certification): it did not land, and it may run again
      if (isDeadlock(error)) throw error;
      throw new CommitOutcomeUnknown('database', `no answer to the commit: ${String(error)}`, {
        cause: error,
      });
    } finally {
      commit.sent = false;
    }
    // hands the connection back: the connection's commit, not em.commit() (that one flushes first, and a flush
    // opens an AsyncLocalStorage context; the stores write with plain statements, there is nothing to flush).
    // Not awaited: from the commit's answer to the caller's there is no turn of the event loop, so the deadline
    // cannot pass in between; one more round trip here could, and would answer "unavailable" for a transaction
    // that landed (its caller would undo what it did before: a gate's unit given back for a recorded order).
    // A failure here loses the connection, not the transaction.
    void em
      .getConnection('write')
      .commit(transaction)
      .catch(() => undefined);
    return result;
  } catch (error) {
    if (sql)
      await Promise.all([sql.query('ROLLBACK', []), sql.query('SET autocommit = 1', [])]).catch(
        () => undefined,
      );
    if (em.getTransactionContext()) await em.rollback().catch(() => undefined);
    throw error;
  }
};
