import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { isDeadlock } from '../../src/adapters/mysql/mysql-errors.js';
import type { MySqlSession } from '../../src/adapters/mysql/mysql-session.js';
import { inTransaction } from '../../src/adapters/mysql/mysql-unit-of-work.js';
import { eventually } from '../support/contract-helpers.js';
import { createTestDatabase, type TestDatabase } from '../support/mysql-database.js';

const TIMEOUT_MS = 20_000;

describe('a transaction InnoDB rolls back as a deadlock victim', () => {
  let db: TestDatabase;

  const statement = (session: MySqlSession, sql: string, params: unknown[] = []) =>
    session.run('test statement', ({ sql: statements }) => statements.query(sql, params));
  const rowsOf = (sql: string): Promise<Array<Record<string, unknown>>> =>
    db.orm.em.getConnection().execute<Array<Record<string, unknown>>>(sql);
  const transaction = <T>(work: (session: MySqlSession) => Promise<T>) =>
    inTransaction(db.orm, Date.now() + TIMEOUT_MS, TIMEOUT_MS, { sent: false }, work);

  beforeAll(async () => {
    db = await createTestDatabase();
    const connection = db.orm.em.getConnection();
    await connection.execute('CREATE TABLE hot (id INT PRIMARY KEY, v INT NOT NULL)');
    await connection.execute('CREATE TABLE written (id INT PRIMARY KEY)');
  }, 60_000);

  afterAll(async () => {
    await db.drop();
  });

  beforeEach(async () => {
    const connection = db.orm.em.getConnection();
    await connection.execute('DELETE FROM written');
    await connection.execute('DELETE FROM hot');
    await connection.execute(
      `INSERT INTO hot VALUES ${Array.from({ length: 20 }, (_, i) => `(${i + 1}, 0)`).join(', ')}`,
    );
  });

  it('leaves nothing behind, not even the statements queued after the one refused', async () => {
    let heavyHolds = false;
    let lightHolds = false;
    // the heavier transaction (more rows changed) is the one InnoDB keeps
    const heavy = transaction(async (session) => {
      await eventually(() => expect(lightHolds).toBe(true), TIMEOUT_MS, 10);
      const others = Array.from({ length: 19 }, (_, i) => (i === 0 ? 1 : i + 2));
      await statement(
        session,
        `UPDATE hot FORCE INDEX (PRIMARY) SET v = 1 WHERE id IN (${others.join(', ')})`,
      );
      heavyHolds = true;
      await statement(session, 'UPDATE hot SET v = 1 WHERE id = 2');
      await statement(session, 'INSERT INTO written VALUES (1)');
    });
    const light = transaction(async (session) => {
      await statement(session, 'UPDATE hot SET v = 2 WHERE id = 2');
      lightHolds = true;
      // once the heavy one holds the others and waits for row 2, asking for row 1 closes the cycle
      await eventually(() => expect(heavyHolds).toBe(true), TIMEOUT_MS, 10);
      await eventually(
        async () =>
          expect(
            await rowsOf("SELECT trx_id FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'"),
          ).toHaveLength(1),
        TIMEOUT_MS,
        10,
      );
      // queued together, as the stores queue a transaction's writes: the second is sent after the first is refused
      const settled = await Promise.allSettled([
        statement(session, 'UPDATE hot SET v = 2 WHERE id = 1'),
        statement(session, 'INSERT INTO written VALUES (2)'),
        statement(session, 'UPDATE hot SET v = 3 WHERE id = 20'),
      ]);
      const failure = settled.find((s) => s.status === 'rejected');
      if (failure) throw failure.reason;
    });

    const [heavyOutcome, lightOutcome] = await Promise.allSettled([heavy, light]);
    if (heavyOutcome.status === 'rejected') throw heavyOutcome.reason;
    expect(lightOutcome.status).toBe('rejected');
    expect(isDeadlock((lightOutcome as PromiseRejectedResult).reason)).toBe(true);

    // the victim wrote nothing; the survivor committed all of its own
    expect(await rowsOf('SELECT id FROM written ORDER BY id')).toEqual([{ id: 1 }]);
    expect(await rowsOf('SELECT v, COUNT(*) AS n FROM hot GROUP BY v ORDER BY v')).toEqual([{ v: 1, n: 20 }]);
  });

  it('hands its connection back with autocommit on: a statement outside a transaction commits', async () => {
    await transaction((session) => statement(session, 'INSERT INTO written VALUES (7)'));
    await expect(
      transaction(async (session) => {
        await statement(session, 'INSERT INTO written VALUES (8)');
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    // every pooled connection, whichever ran the transactions above
    const autocommit = await Promise.all(
      Array.from({ length: 4 }, () => rowsOf('SELECT @@autocommit AS on_')),
    );
    expect(autocommit.flat().every((row) => Number(row['on_']) === 1)).toBe(true);
    expect(await rowsOf('SELECT id FROM written ORDER BY id')).toEqual([{ id: 7 }]);
  });
});
