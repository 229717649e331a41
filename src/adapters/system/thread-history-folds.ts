import { type ResourceLimits, Worker } from 'node:worker_threads';
import type { HistoryFold, HistoryFolds } from '../../application/index.js';
import type { AuditedEvent, ReplayOutcome } from '../../domain/index.js';

/** What the audit's thread is asked (history-fold-thread.ts), one request at a time. */
export type FoldRequest =
  | Readonly<{ type: 'apply'; page: readonly AuditedEvent[] }>
  | Readonly<{ type: 'finish'; now: string; staleAfterMs: number }>;

/** What it answers: a page folded, or the outcome. */
export type FoldAnswer =
  Readonly<{ type: 'applied' }> | Readonly<{ type: 'outcome'; outcome: ReplayOutcome }>;

/**
 * Each audit's replay in a worker thread of its own: its open state (every order still open, what each buyer
 * holds: hundreds of bytes an order) grows on the thread's heap, not on the heap of the process that answers
 * buyers, and is gone with the thread when the audit ends, without waiting for the process's next full
 * collection. The fold runs on another core meanwhile. Pages go to the thread by structured clone.
 */
export class ThreadHistoryFolds implements HistoryFolds {
  constructor(
    private readonly script: URL = new URL('./history-fold-thread.js', import.meta.url),
    /** the thread's heap bounds; by default the process's (`--max-old-space-size` applies to each thread) */
    private readonly resourceLimits: ResourceLimits = {},
  ) {}

  open(): HistoryFold {
    return new ThreadFold(new Worker(this.script, { resourceLimits: this.resourceLimits }));
  }
}

type Waiting = Readonly<{ resolve: (answer: FoldAnswer) => void; reject: (error: Error) => void }>;

class ThreadFold implements HistoryFold {
  private waiting: Waiting | null = null;
  private failure: Error | null = null;

  constructor(private readonly worker: Worker) {
    worker.on('message', (answer: FoldAnswer) => {
      const waiting = this.waiting;
      this.waiting = null;
      waiting?.resolve(answer);
    });
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the audit's thread ended (exit code ${code})`)));
  }

  async apply(page: readonly AuditedEvent[]): Promise<void> {
    await this.ask({ type: 'apply', page });
  }

  async finish(now: string, staleAfterMs: number): Promise<ReplayOutcome> {
    const answer = await this.ask({ type: 'finish', now, staleAfterMs });
    if (answer.type !== 'outcome') throw new Error(`the audit's thread answered ${answer.type} to finish`);
    return answer.outcome;
  }

  async close(): Promise<void> {
    this.fail(new Error("the audit's thread was let go"));
    await this.worker.terminate();
  }

  private ask(request: FoldRequest): Promise<FoldAnswer> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.waiting) return Promise.reject(new Error("the audit's thread takes one request at a time"));
    return new Promise<FoldAnswer>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.postMessage(request);
    });
  }

  /** The first failure ends the fold: the request waiting and every later one are refused with it. */
  private fail(error: Error): void {
    this.failure ??= error;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(this.failure);
  }
}
