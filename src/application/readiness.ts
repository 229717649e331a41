import type { HealthCheck } from './ports/index.js';

/** A dependency's check: its name, and its error message when it failed (null: it answered). */
export type CheckOutcome = readonly [name: string, failure: string | null];

const withTimeout = async <T>(work: Promise<T>, ms: number): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
};

/**
 * Runs every dependency's check together (a caller waits for the slowest, not for their sum); one that does
 * not answer within `timeoutMs` has failed. What `/readyz` answers, and what each instance's beat reports.
 */
export const checkDependencies = (
  checks: readonly HealthCheck[],
  timeoutMs: number,
): Promise<CheckOutcome[]> =>
  Promise.all(
    checks.map(async (check): Promise<CheckOutcome> => {
      try {
        await withTimeout(check.check(), timeoutMs);
        return [check.name, null];
      } catch (error) {
        return [check.name, error instanceof Error ? error.message : String(error)];
      }
    }),
  );
