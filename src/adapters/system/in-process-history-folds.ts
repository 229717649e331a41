import type { HistoryFold, HistoryFolds } from '../../application/index.js';
import { HistoryReplay, replayOutcome } from '../../domain/index.js';

/**
 * The audit's replay on the caller's own heap, kept there until the next full collection: for a process whose
 * one job is the audit (SECKILL_AUDIT_THREAD=false), and for tests run from source.
 */
export class InProcessHistoryFolds implements HistoryFolds {
  open(): HistoryFold {
    let replay: HistoryReplay | null = new HistoryReplay();
    const live = (): HistoryReplay => {
      if (!replay) throw new Error('the replay was let go');
      return replay;
    };
    // each answers as a promise, a refusal among them, as the thread's fold does
    const settle = <T>(work: () => T): Promise<T> => new Promise((resolve) => resolve(work()));
    return {
      apply: (page) =>
        settle(() => {
          const folding = live();
          for (const event of page) folding.apply(event);
        }),
      finish: (now, staleAfterMs) => settle(() => replayOutcome(live().result(), now, staleAfterMs)),
      close: () =>
        settle(() => {
          replay = null;
        }),
    };
  }
}
