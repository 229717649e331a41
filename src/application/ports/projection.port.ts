import type { OrderView } from './order-read-model.port.js';

/** How a rebuilt projection compares with the live one, row by row. */
export type ProjectionComparison = Readonly<{
  liveRows: number;
  rebuiltRows: number;
  /** rows missing on either side or differing in any column */
  differing: number;
  /** a few of the differing order ids, to look at */
  sample: readonly string[];
}>;

/**
 * Fresh tables the `orders` projection is rebuilt into, beside the live ones, with a checkpoint: the global
 * position of the last event applied. The rows of a page and the checkpoint are written together, so a
 * rebuild that stops resumes where it was.
 */
export interface OrderProjectionRebuild {
  /** Empties the fresh table and sets the checkpoint to 0. */
  reset(): Promise<void>;
  checkpoint(): Promise<number>;
  /** The fresh table's rows of these orders. */
  rows(orderIds: readonly string[]): Promise<Map<string, OrderView>>;
  /** Writes rows and moves the checkpoint, in one transaction. */
  commit(rows: readonly OrderView[], position: number): Promise<void>;
  compare(): Promise<ProjectionComparison>;
  /** Puts the fresh table in place of the live one (with the service's writers stopped). */
  swap(): Promise<void>;
}
