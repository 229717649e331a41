import type { EntityManager, MikroORM } from '@mikro-orm/mysql';
import { InfrastructureUnavailable } from '../../application/index.js';
import { translate } from './mysql-errors.js';
import { pooledStatements, type SqlStatements } from './mysql-sql.js';

/**
 * What a store may reach the database through, and nothing else: MikroORM's EntityManager for the occasional
 * query, and plain SQL for the hot paths. Inside a unit of work both are bound to the transaction's one
 * connection, so every statement sees the transaction's writes and none waits for a second pool connection.
 */
export type Db = Readonly<{ em: EntityManager; sql: SqlStatements }>;

/** How a store reaches the database: on its own (autocommit), or inside one unit of work's transaction. */
export interface MySqlSession {
  run<T>(what: string, operation: (db: Db) => Promise<T>): Promise<T>;
}

const timedOut = (what: string, ms: number) =>
  new InfrastructureUnavailable('database', `${what}: no answer within ${ms} ms`);

/** Races an operation against a deadline: a database that stops answering fails the call, it never hangs it. */
export const withDeadline = async <T>(what: string, ms: number, work: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  // the abandoned operation may still settle later; its outcome is nobody's business any more
  work.catch(() => undefined);
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timedOut(what, ms)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
};

/** Outside a transaction: MikroORM on a fresh fork, SQL on a pooled connection per statement, with a deadline. */
export const standaloneSession = (orm: MikroORM, timeoutMs: number): MySqlSession => {
  const sql = pooledStatements(orm);
  return {
    run: async (what, operation) => {
      try {
        return await withDeadline(what, timeoutMs, operation({ em: orm.em.fork(), sql }));
      } catch (error) {
        return translate(error, what);
      }
    },
  };
};

/**
 * Inside a transaction: every statement on the transaction's connection. Once the transaction's deadline has
 * passed, the next step throws instead of going on, so a late answer rolls the transaction back rather than
 * letting it commit after the caller was told it failed.
 */
export const transactionSession = (db: Db, expiresAt: number, timeoutMs: number): MySqlSession => ({
  run: async (what, operation) => {
    if (Date.now() > expiresAt) throw timedOut(what, timeoutMs);
    try {
      const result = await operation(db);
      if (Date.now() > expiresAt) throw timedOut(what, timeoutMs);
      return result;
    } catch (error) {
      return translate(error, what);
    }
  },
});
