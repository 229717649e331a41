import { afterAll, beforeAll } from '@jest/globals';
import type { MikroORM } from '@mikro-orm/mysql';
import { MySqlEventStore } from '../../src/adapters/mysql/mysql-event-store.js';
import { MySqlInventory } from '../../src/adapters/mysql/mysql-inventory.js';
import { MySqlOrderReadModel } from '../../src/adapters/mysql/mysql-order-read-model.js';
import { openMySql } from '../../src/adapters/mysql/mysql-orm.js';
import { MySqlOrderProjectionRebuild } from '../../src/adapters/mysql/mysql-projection-rebuild.js';
import { MySqlOutbox } from '../../src/adapters/mysql/mysql-outbox.js';
import { standaloneSession } from '../../src/adapters/mysql/mysql-session.js';
import { MySqlUnitOfWork } from '../../src/adapters/mysql/mysql-unit-of-work.js';
import { eventStoreContract } from '../contract/event-store.contract.js';
import { inventoryContract } from '../contract/inventory.contract.js';
import { orderReadModelContract } from '../contract/order-read-model.contract.js';
import { orderProjectionRebuildContract } from '../contract/order-projection-rebuild.contract.js';
import { outboxContract } from '../contract/outbox.contract.js';
import { everyStatementInsideContract, unitOfWorkContract } from '../contract/unit-of-work.contract.js';
import { createTestDatabase, emptyTables, type TestDatabase } from '../support/mysql-database.js';

const TIMEOUT_MS = 10_000;
let db: TestDatabase;
/** the same database through a pool of ONE connection, which a unit of work's transaction holds */
let single: MikroORM;

beforeAll(async () => {
  db = await createTestDatabase({ poolMax: 30 });
  single = await openMySql({ url: db.url, poolMin: 1, poolMax: 1, acquireTimeoutMs: 1_000 });
}, 60_000);

afterAll(async () => {
  await single.close(true);
  await db.drop();
});

const session = () => standaloneSession(db.orm, TIMEOUT_MS);
const clean = async <T>(build: () => T): Promise<T> => {
  await emptyTables(db.orm);
  return build();
};

eventStoreContract(
  'MySqlEventStore (MariaDB)',
  () => clean(() => new MySqlEventStore(session())),
  (_store, upcaster) => new MySqlEventStore(session(), upcaster),
);
inventoryContract('MySqlInventory (MariaDB)', () => clean(() => new MySqlInventory(session())));
orderReadModelContract('MySqlOrderReadModel (MariaDB)', () =>
  clean(() => new MySqlOrderReadModel(session())),
);
orderProjectionRebuildContract('MySqlOrderProjectionRebuild (MariaDB)', () =>
  clean(() => ({
    target: new MySqlOrderProjectionRebuild(db.orm, TIMEOUT_MS),
    live: new MySqlOrderReadModel(session()),
  })),
);
outboxContract('MySqlOutbox (MariaDB)', () => clean(() => new MySqlOutbox(session())));
unitOfWorkContract('MySqlUnitOfWork (MariaDB)', () =>
  clean(() => ({
    unitOfWork: new MySqlUnitOfWork(db.orm, TIMEOUT_MS),
    events: new MySqlEventStore(session()),
    orders: new MySqlOrderReadModel(session()),
    outbox: new MySqlOutbox(session()),
    inventory: new MySqlInventory(session()),
  })),
);

everyStatementInsideContract('MySqlUnitOfWork (MariaDB, a pool of one connection)', () =>
  clean(() => ({
    unitOfWork: new MySqlUnitOfWork(single, TIMEOUT_MS),
    events: new MySqlEventStore(session()),
    orders: new MySqlOrderReadModel(session()),
    outbox: new MySqlOutbox(session()),
    inventory: new MySqlInventory(session()),
  })),
);
