import type { EntityManager } from '@mikro-orm/mysql';
import { InfrastructureUnavailable } from '../../application/index.js';
import { translate } from './mysql-errors.js';

/** How a store reaches the database: on its own (a fork per call), or inside one unit of work's transaction. */
export interface MySqlSession {
  run<T>(what: string, operation: (em: EntityManager) => Promise<T>): Promise<T>;
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

/** Outside a transaction: every call on a fresh fork, with a deadline. */
export const standaloneSession = (root: EntityManager, timeoutMs: number): MySqlSession => ({
  run: async (what, operation) => {
    try {
      return await withDeadline(what, timeoutMs, operation(root.fork()));
    } catch (error) {
      return translate(error, what);
    }
  },
});

/**
 * Inside a transaction: every statement on the transaction's EntityManager. Once the transaction's deadline
 * has passed, the next step throws instead of going on, so a late answer rolls the transaction back rather
 * than letting it commit after the caller was told it failed.
 */
export const transactionSession = (
  em: EntityManager,
  expiresAt: number,
  timeoutMs: number,
): MySqlSession => ({
  run: async (what, operation) => {
    if (Date.now() > expiresAt) throw timedOut(what, timeoutMs);
    try {
      const result = await operation(em);
      if (Date.now() > expiresAt) throw timedOut(what, timeoutMs);
      return result;
    } catch (error) {
      return translate(error, what);
    }
  },
});
