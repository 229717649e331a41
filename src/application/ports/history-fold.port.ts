import type { AuditedEvent, ReplayOutcome } from '../../domain/index.js';

/**
 * One replay of the history for the audit, fed a page at a time in global order. Its state (a ledger per
 * product, the open orders, what each buyer holds) lives where the adapter puts it: in process, or in a
 * thread of its own whose memory goes when the replay is let go.
 */
export interface HistoryFold {
  /** folds the next page; the next call waits for this one */
  apply(page: readonly AuditedEvent[]): Promise<void>;
  /** the history has run out: what the replay found, reservations undecided for longer than `staleAfterMs` flagged */
  finish(now: string, staleAfterMs: number): Promise<ReplayOutcome>;
  /** lets the replay go, finished or not */
  close(): Promise<void>;
}

export interface HistoryFolds {
  open(): HistoryFold;
}
