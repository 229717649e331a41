export type GroupCommitOptions = Readonly<{
  /** a batch is written as soon as it holds this many items */
  maxBatch: number;
  /** …or once its first item has waited this long (0: at the next turn of the event loop) */
  maxWaitMs: number;
  /** batches being written at once; what arrives meanwhile waits and goes into the next batch */
  maxConcurrent: number;
}>;

type Waiting<T> = Readonly<{ item: T; resolve: () => void; reject: (error: unknown) => void }>;

/**
 * Group commit: items that arrive at about the same time are written together, one `write` call (one
 * transaction) per batch, and each caller is answered when the batch that holds its item has been written —
 * or failed, in which case every caller of that batch gets the error. A batch is written when it is full,
 * when its first item has waited `maxWaitMs`, or, while `maxConcurrent` batches are being written, as soon as
 * one of them is done: under load batches grow by themselves instead of queuing transactions.
 */
export class GroupCommit<T> {
  private waiting: Waiting<T>[] = [];
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private writing = 0;
  private settledWaiters: Array<() => void> = [];

  constructor(
    private readonly write: (batch: readonly T[]) => Promise<void>,
    private readonly options: GroupCommitOptions,
  ) {
    if (options.maxBatch < 1 || options.maxConcurrent < 1) throw new RangeError('group commit needs room');
  }

  /** Resolves once the item has been written with its batch; rejects with the batch's error. */
  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.waiting.length >= this.options.maxBatch) this.flush();
      else this.timer ??= this.startTimer();
    });
  }

  /** Items waiting or being written. */
  get busy(): boolean {
    return this.waiting.length > 0 || this.writing > 0;
  }

  /** Resolves once everything submitted so far has been written or has failed (for shutdown). */
  settled(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  private startTimer(): NodeJS.Timeout | NodeJS.Immediate {
    const fire = () => {
      this.timer = null;
      this.flush();
    };
    return this.options.maxWaitMs > 0 ? setTimeout(fire, this.options.maxWaitMs) : setImmediate(fire);
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
      this.timer = null;
    }
    while (this.writing < this.options.maxConcurrent && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.writing += 1;
      void this.writeBatch(batch);
    }
  }

  private async writeBatch(batch: readonly Waiting<T>[]): Promise<void> {
    try {
      await this.write(batch.map((w) => w.item));
      for (const w of batch) w.resolve();
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      this.writing -= 1;
      // whatever arrived while this batch was written has waited long enough
      if (this.waiting.length > 0) this.flush();
      else if (!this.busy) for (const resolve of this.settledWaiters.splice(0)) resolve();
    }
  }
}
