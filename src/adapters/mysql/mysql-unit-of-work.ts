import type { MikroORM } from '@mikro-orm/mysql';
import type { TransactionalStores, UnitOfWork } from '../../application/index.js';
import { translate } from './mysql-errors.js';
import { MySqlEventStore } from './mysql-event-store.js';
import { MySqlInventory } from './mysql-inventory.js';
import { MySqlOrderReadModel } from './mysql-order-read-model.js';
import { MySqlOutbox } from './mysql-outbox.js';
import { transactionSession, withDeadline } from './mysql-session.js';

/**
 * One transaction per use case on a forked EntityManager: events, read model, outbox and stock commit
 * together or not at all. A transaction that outlives its deadline fails the caller with the unavailable
 * error and rolls back at its next step instead of committing late.
 */
export class MySqlUnitOfWork implements UnitOfWork {
  constructor(
    private readonly orm: MikroORM,
    private readonly timeoutMs: number,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  async run<T>(work: (stores: TransactionalStores) => Promise<T>): Promise<T> {
    const expiresAt = Date.now() + this.timeoutMs;
    const transaction = this.orm.em.fork().transactional(async (em) => {
      const session = transactionSession(em, expiresAt, this.timeoutMs);
      return work({
        events: new MySqlEventStore(session, this.now),
        orders: new MySqlOrderReadModel(session),
        outbox: new MySqlOutbox(session),
        inventory: new MySqlInventory(session),
      });
    });
    try {
      return await withDeadline('transaction', this.timeoutMs, transaction);
    } catch (error) {
      return translate(error, 'transaction');
    }
  }
}
