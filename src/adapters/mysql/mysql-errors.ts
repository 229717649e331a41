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
]);

const codeOf = (error: unknown): unknown =>
  typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;

/** A server that is down, refuses, or does not answer in time: the port's unavailable error (503). */
export const isUnavailable = (error: unknown): boolean => {
  if (error instanceof InfrastructureUnavailable || error instanceof ConnectionException) return true;
  if (
    error instanceof Error &&
    (error.name === 'KnexTimeoutError' || /Timeout acquiring a connection/.test(error.message))
  )
    return true;
  const code = codeOf(error) ?? codeOf((error as { cause?: unknown } | null)?.cause);
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
