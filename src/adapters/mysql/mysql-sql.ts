import type { MikroORM } from '@mikro-orm/mysql';

/** What a write statement answers. */
export type WriteResult = Readonly<{ affectedRows: number; insertId: number }>;

/**
 * Plain SQL on one connection, without entity machinery: what the hot paths use. `execute` sends a
 * prepared statement (parsed once per connection, for statements of a fixed shape); `query` sends text with
 * the values escaped by the driver (for statements whose shape follows their input, like multi-row VALUES
 * lists or IN lists: each row count would otherwise be a prepared statement of its own, and MariaDB caps
 * those server-wide).
 */
export interface SqlStatements {
  execute<T = unknown>(sql: string, params: readonly unknown[]): Promise<T>;
  query<T = unknown>(sql: string, params: readonly unknown[]): Promise<T>;
}

type Callback = (error: Error | null, result: unknown) => void;

/** The mysql2 connection (callback API) that knex's pool hands out. */
export type DriverConnection = Readonly<{
  execute(sql: string, values: unknown[], callback: Callback): void;
  query(sql: string, values: unknown[], callback: Callback): void;
}>;

/** The knex client under MikroORM: its pool of driver connections. */
type KnexClient = Readonly<{
  acquireConnection(): Promise<DriverConnection>;
  releaseConnection(connection: DriverConnection): Promise<unknown>;
}>;

const call = <T>(
  send: (sql: string, values: unknown[], callback: Callback) => void,
  sql: string,
  params: readonly unknown[],
): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    send(sql, params as unknown[], (error, result) => (error ? reject(error) : resolve(result as T)));
  });

/** Statements on one driver connection (a transaction's, or one borrowed for a single statement). */
export const statementsOn = (connection: DriverConnection): SqlStatements => ({
  execute: (sql, params) => call(connection.execute.bind(connection), sql, params),
  query: (sql, params) => call(connection.query.bind(connection), sql, params),
});

/**
 * Outside a transaction only: each statement borrows a pooled connection for itself (autocommit). A unit of
 * work never uses these; it hands its stores the transaction's own connection (`statementsOn`).
 */
export const pooledStatements = (orm: MikroORM): SqlStatements => {
  const client = orm.em.getKnex().client as KnexClient;
  const borrow = async <T>(use: (statements: SqlStatements) => Promise<T>): Promise<T> => {
    const connection = await client.acquireConnection();
    try {
      return await use(statementsOn(connection));
    } finally {
      await client.releaseConnection(connection);
    }
  };
  return {
    execute: (sql, params) => borrow((s) => s.execute(sql, params)),
    query: (sql, params) => borrow((s) => s.query(sql, params)),
  };
};

/** `?, ?, ?` for an IN list or a VALUES row. */
export const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** An ISO instant as a DATETIME(3) literal in UTC ('2026-12-03T07:40:27.161Z' → '2026-12-03 07:40:27.161'). */
export const toDateTime = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;

/** A DATETIME(3) read back as a string (the driver runs with dateStrings) → an ISO instant. */
export const fromDateTime = (value: string | Date): string =>
  value instanceof Date
    ? value.toISOString()
    : `${value.slice(0, 10)}T${value.slice(11, 23).padEnd(12, '.000')}Z`;
