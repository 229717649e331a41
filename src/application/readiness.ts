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

export type ReadinessProbeOptions = Readonly<{
  /** a check that has not answered within this has failed */
  timeoutMs: number;
  /** a round of checks is answered again for this long after it finished */
  maxAgeMs: number;
  /** milliseconds of a monotonic clock (performance.now by default) */
  now?: () => number;
}>;

/**
 * `/readyz` for any number of callers at a bounded cost: a round of the dependencies' checks is kept for
 * `maxAgeMs` after it finished, and callers that arrive while one runs share it. However often the endpoint
 * is asked, the dependencies are asked at most about once per `maxAgeMs`.
 */
export class ReadinessProbe {
  private last: Readonly<{ finishedAt: number; outcomes: CheckOutcome[] }> | null = null;
  private running: Promise<CheckOutcome[]> | null = null;
  private rounds = 0;
  private readonly now: () => number;

  constructor(
    private readonly checks: readonly HealthCheck[],
    private readonly options: ReadinessProbeOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  /** rounds of checks run so far */
  get roundsRun(): number {
    return this.rounds;
  }

  outcomes(): Promise<CheckOutcome[]> {
    const { last } = this;
    if (last && this.now() - last.finishedAt < this.options.maxAgeMs) return Promise.resolve(last.outcomes);
    if (this.running) return this.running;
    this.rounds += 1;
    const round = checkDependencies(this.checks, this.options.timeoutMs).then((outcomes) => {
      this.last = { finishedAt: this.now(), outcomes };
      this.running = null;
      return outcomes;
    });
    this.running = round;
    return round;
  }
}
