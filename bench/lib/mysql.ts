/**
 * The benchmark's own MariaDB plumbing (mysql2, the driver under MikroORM): databases named
 * `seckill_bench_<run>…` that it creates and drops, the naive baseline's table, and the hot-row ceiling.
 */
import {
  type Connection,
  createConnection,
  createPool,
  type ResultSetHeader,
  type RowDataPacket,
} from 'mysql2/promise';

export const mysqlServerUrl = (): string => process.env['BENCH_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306';

export const databaseUrl = (name: string): string => `${mysqlServerUrl().replace(/\/+$/, '')}/${name}`;

/** Only names this benchmark makes, so a DROP can never hit anything else. */
const checked = (name: string): string => {
  if (!/^seckill_bench_[a-z0-9_]+$/.test(name)) throw new Error(`refusing database name ${name}`);
  return name;
};

export const openAdmin = (): Promise<Connection> => createConnection({ uri: mysqlServerUrl() });

export const createDatabase = async (admin: Connection, name: string): Promise<void> => {
  await admin.query(`CREATE DATABASE \`${checked(name)}\``);
};

export const dropDatabase = async (admin: Connection, name: string): Promise<void> => {
  await admin.query(`DROP DATABASE IF EXISTS \`${checked(name)}\``);
};

/** The naive baseline's table: the same product row shape as the service's (stock, version, CHECK). */
export const createNaiveProducts = async (
  admin: Connection,
  db: string,
  stocks: number[],
): Promise<number[]> => {
  await admin.query(`
    CREATE TABLE \`${checked(db)}\`.product (
      id INT UNSIGNED NOT NULL AUTO_INCREMENT,
      stock INT NOT NULL,
      version INT NOT NULL DEFAULT 0,
      PRIMARY KEY (id),
      CONSTRAINT naive_stock_never_negative CHECK (stock >= 0)
    ) ENGINE=InnoDB`);
  const ids: number[] = [];
  for (const stock of stocks) {
    const [result] = await admin.query<ResultSetHeader>(`INSERT INTO \`${db}\`.product (stock) VALUES (?)`, [
      stock,
    ]);
    ids.push(result.insertId);
  }
  return ids;
};

export type HotRow = Readonly<{ connections: number; seconds: number; committed: number; perSec: number }>;

/**
 * MariaDB's single-row ceiling: `connections` clients, each doing the conditional decrement on the same row
 * (autocommit: one transaction each) as fast as it can for `seconds`; committed updates per second.
 */
export const hotRowCeiling = async (
  url: string,
  productId: number,
  connections: number,
  seconds: number,
): Promise<HotRow> => {
  const pool = createPool({ uri: url, connectionLimit: connections });
  const sql = 'UPDATE product SET stock = stock - 1, version = version + 1 WHERE id = ? AND stock >= 1';
  try {
    // open every connection first, so the timed part is only updates
    const warm = await Promise.all(Array.from({ length: connections }, () => pool.getConnection()));
    for (const c of warm) c.release();
    let committed = 0;
    const started = performance.now();
    const until = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < until) {
          const [result] = await pool.execute<ResultSetHeader>(sql, [productId]);
          committed += result.affectedRows;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    return { connections, seconds: elapsed, committed, perSec: Math.round(committed / elapsed) };
  } finally {
    await pool.end();
  }
};

/** Statement counters of the server (global: anything else running on it adds to them). */
export const statementCounters = async (admin: Connection): Promise<number> => {
  const [rows] = await admin.query<RowDataPacket[]>(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_insert', 'Com_update', 'Com_delete')",
  );
  return rows.reduce((sum, row) => sum + Number(row['Value']), 0);
};

export const count = async (admin: Connection, sql: string, params: unknown[] = []): Promise<number> => {
  const [rows] = await admin.query<RowDataPacket[]>(sql, params);
  const first = rows[0];
  return first ? Number(Object.values(first)[0]) : 0;
};
