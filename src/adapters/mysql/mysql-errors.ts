import { ConnectionException, DeadlockException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { InfrastructureUnavailable } from '../../application/index.js';

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  // a Galera node outside the primary component, or not synced yet: "WSREP has not yet prepared node"
  'ER_UNKNOWN_COM_ERROR',
  // the server killed the connection (a node leaving the cluster, an operator's KILL)
  'ER_CONNECTION_KILLED',
]);

const codeOf = (error: unknown): unknown =>
  typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;

const isFatal = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { fatal?: unknown }).fatal === true;

/** A server that is down, refuses, or does not answer in time: the port's unavailable error (503). */
export const isUnavailable = (error: unknown): boolean => {
  if (error instanceof InfrastructureUnavailable || error instanceof ConnectionException) return true;
  if (
    error instanceof Error &&
    (error.name === 'KnexTimeoutError' || /Timeout acquiring a connection/.test(error.message))
  )
    return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  // the driver's own word for a connection that is gone ("closed state"): it carries no code
  if (isFatal(error) || isFatal(cause)) return true;
  const code = codeOf(error) ?? codeOf(cause);
  return typeof code === 'string' && CONNECTION_CODES.has(code);
};

/** A unique key refused a row: from MikroORM, or from the driver under the plain SQL statements. */
export const isDuplicateKey = (error: unknown): boolean =>
  error instanceof UniqueConstraintViolationException || codeOf(error) === 'ER_DUP_ENTRY';

/** InnoDB broke a lock cycle by rolling this transaction back: running it again is the remedy. */
export const isDeadlock = (error: unknown): boolean =>
  error instanceof DeadlockException || codeOf(error) === 'ER_LOCK_DEADLOCK';

/** Rethrows a database failure as the port's unavailable error; anything else as it is. */
export const translate = (error: unknown, what: string): never => {
  if (error instanceof InfrastructureUnavailable) throw error;
  if (isUnavailable(error))
    throw new InfrastructureUnavailable(
      'database',
      `${what}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  throw error;
};
