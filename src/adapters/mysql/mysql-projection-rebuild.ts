import type { MikroORM } from '@mikro-orm/mysql';
import type { OrderProjectionRebuild, OrderView, ProjectionComparison } from '../../application/index.js';
import {
  fromRecord,
  ORDER_COLUMNS,
  type OrderRecord,
  toValues,
  upsertInto,
} from './mysql-order-read-model.js';
import { standaloneSession } from './mysql-session.js';
import { marks, toDateTime } from './mysql-sql.js';
import { inTransaction } from './mysql-unit-of-work.js';

const FRESH = 'orders_rebuild';
const CHECKPOINT = 'orders';

/** Rows that differ in any column (`<=>` is equal-or-both-null), or exist on one side only. */
const differingRows = (a: string, b: string): string => {
  const same = ORDER_COLUMNS.split(', ')
    .filter((c) => c !== 'order_id')
    .map((c) => `${a}.${c} <=> ${b}.${c}`)
    .join(' AND ');
  return `SELECT ${a}.order_id FROM ${a} LEFT JOIN ${b} ON ${b}.order_id = ${a}.order_id WHERE ${b}.order_id IS NULL OR NOT (${same})`;
};

/**
 * The `orders` projection rebuilt into `orders_rebuild`, created LIKE the live table (so it has its columns
 * and indexes, whatever migrations did), with its checkpoint in `projection_checkpoint`.
 */
export class MySqlOrderProjectionRebuild implements OrderProjectionRebuild {
  private readonly session;

  constructor(
    private readonly orm: MikroORM,
    private readonly timeoutMs: number,
  ) {
    this.session = standaloneSession(orm, timeoutMs);
  }

  reset(): Promise<void> {
    return this.session.run('reset the rebuild', async ({ sql }) => {
      await sql.query(`CREATE TABLE IF NOT EXISTS ${FRESH} LIKE orders`, []);
      await sql.query(`TRUNCATE TABLE ${FRESH}`, []);
      await sql.query(
        'INSERT INTO projection_checkpoint (name, position, updated_at) VALUES (?, 0, ?) ON DUPLICATE KEY UPDATE position = 0, updated_at = VALUES(updated_at)',
        [CHECKPOINT, toDateTime(new Date().toISOString())],
      );
    });
  }

  checkpoint(): Promise<number> {
    return this.session.run('read the checkpoint', async ({ sql }) => {
      const [row] = await sql.query<Array<{ position: number | string }>>(
        'SELECT position FROM projection_checkpoint WHERE name = ?',
        [CHECKPOINT],
      );
      return Number(row?.position ?? 0);
    });
  }

  rows(orderIds: readonly string[]): Promise<Map<string, OrderView>> {
    return this.session.run('read rebuilt rows', async ({ sql }) => {
      const rows = await sql.query<OrderRecord[]>(
        `SELECT ${ORDER_COLUMNS} FROM ${FRESH} WHERE order_id IN (${marks(orderIds.length)})`,
        [...orderIds],
      );
      return new Map(rows.map((row) => [row.order_id, fromRecord(row)]));
    });
  }

  commit(rows: readonly OrderView[], position: number): Promise<void> {
    return inTransaction(this.orm, Date.now() + this.timeoutMs, this.timeoutMs, { sent: false }, (session) =>
      session.run('write rebuilt rows', async ({ sql }) => {
        if (rows.length > 0) await sql.query(upsertInto(FRESH), [rows.map(toValues)]);
        await sql.query('UPDATE projection_checkpoint SET position = ?, updated_at = ? WHERE name = ?', [
          position,
          toDateTime(new Date().toISOString()),
          CHECKPOINT,
        ]);
      }),
    );
  }

  compare(): Promise<ProjectionComparison> {
    return this.session.run('compare the rebuild', async ({ sql }) => {
      const count = async (table: string) =>
        Number(
          (await sql.query<Array<{ n: number | string }>>(`SELECT COUNT(*) AS n FROM ${table}`, []))[0]?.n ??
            0,
        );
      const differing = await sql.query<Array<{ order_id: string }>>(
        `${differingRows('orders', FRESH)} UNION ${differingRows(FRESH, 'orders')}`,
        [],
      );
      return {
        liveRows: await count('orders'),
        rebuiltRows: await count(FRESH),
        differing: differing.length,
        sample: differing.slice(0, 5).map((row) => row.order_id),
      };
    });
  }

  swap(): Promise<void> {
    return this.session.run('swap in the rebuild', async ({ sql }) => {
      await sql.query(`RENAME TABLE orders TO orders_replaced, ${FRESH} TO orders`, []);
      await sql.query('DROP TABLE orders_replaced', []);
    });
  }
}
