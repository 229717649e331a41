import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach } from '@jest/globals';
import type { Logger, Metrics } from '../../src/application/index.js';

/** Releases what a contract factory made (connections, keys, databases). */
export type Teardown<T> = (subject: T) => Promise<void>;

/**
 * Registers a beforeEach/afterEach pair in the enclosing describe: each test gets its own subject, so a
 * real adapter can give every test its own key prefix or database. Returns the current test's subject.
 */
export const freshPerTest = <T>(make: () => Promise<T>, teardown?: Teardown<T>): (() => T) => {
  let current: { subject: T } | null = null;
  beforeEach(async () => {
    current = { subject: await make() };
  });
  afterEach(async () => {
    const made = current;
    current = null;
    if (made && teardown) await teardown(made.subject);
  });
  return () => {
    if (!current) throw new Error('the contract subject is only available inside a test');
    return current.subject;
  };
};

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Retries an assertion until it passes or `timeoutMs` runs out, then throws its last failure. For
 * effects that arrive asynchronously (pub/sub, consumers), so that tests wait for a condition, not a time.
 */
export const eventually = async (
  assertion: () => unknown,
  timeoutMs = 3_000,
  intervalMs = 5,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await assertion();
      return;
    } catch (failure) {
      if (Date.now() >= deadline) throw failure;
      await pause(intervalMs);
    }
  }
};

/** Milliseconds a promise took to settle, with its value. */
export const timed = async <T>(work: Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
};

/** Names that no other test (or earlier run against a shared server) has used. */
export const uniqueName = (prefix: string): string => `${prefix}-${randomUUID()}`;

/** A fixed instant plus `seconds`, as the ISO-8601 UTC string the stores keep. */
export const instant = (seconds: number): string =>
  new Date(Date.UTC(2030, 0, 1) + seconds * 1_000).toISOString();

/** Counts the values that satisfy a predicate. */
export const countWhere = <T>(values: readonly T[], predicate: (value: T) => boolean): number =>
  values.filter(predicate).length;

export const silentLogger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** Metrics that go nowhere, for tests that do not look at them. */
export const noMetrics: Metrics = { count: () => undefined, gauge: () => undefined };
