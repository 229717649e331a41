/** A promise and the function that settles it, for a job run that a test holds until it lets it go. */
export type Held = Readonly<{ until: Promise<void>; release: () => void }>;

export const held = (): Held => {
  let release = () => {};
  const until = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { until, release };
};

/**
 * A scheduled job that counts its runs. `job` is what the scheduler is given; `body` says what run n does
 * (wait, throw). A test waits for a count with `until` instead of sleeping.
 */
export class JobRuns {
  started = 0;
  finished = 0;
  private active = 0;
  /** the most runs of this job ever under way at one time */
  mostAtOnce = 0;
  private waiters: Array<{ done: () => boolean; resolve: () => void }> = [];

  constructor(private readonly body: (run: number) => Promise<void> = () => Promise.resolve()) {}

  readonly job = async (): Promise<void> => {
    this.started += 1;
    this.active += 1;
    this.mostAtOnce = Math.max(this.mostAtOnce, this.active);
    const run = this.started;
    this.notify();
    try {
      await this.body(run);
    } finally {
      this.active -= 1;
      this.finished += 1;
      this.notify();
    }
  };

  /** Resolves once `count` runs have started. */
  startedAtLeast(count: number): Promise<void> {
    return this.until(() => this.started >= count);
  }

  /** Resolves once `count` runs have ended, thrown or not. */
  finishedAtLeast(count: number): Promise<void> {
    return this.until(() => this.finished >= count);
  }

  private until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ done, resolve }));
  }

  private notify(): void {
    const ready = this.waiters.filter((w) => w.done());
    this.waiters = this.waiters.filter((w) => !w.done());
    for (const w of ready) w.resolve();
  }
}
