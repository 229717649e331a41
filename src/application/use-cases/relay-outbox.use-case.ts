import type { Clock, Logger, MessagePublisher, Metrics, Outbox, OutboxMessage } from '../ports/index.js';
import { OutboxStatus } from '../ports/index.js';

export type RelayOptions = Readonly<{
  /** a PENDING row younger than this is still being published by the request that wrote it */
  pendingGraceMs: number;
  /** a SENT row not consumed after this is sent again */
  staleSentMs: number;
  /** first retry delay; doubles with each failed attempt */
  backoffBaseMs: number;
  maxAttempts: number;
  batchSize: number;
}>;

export type RelayReport = { published: number; failed: number; dead: number };

/** Re-sends what the broker missed. Consumers are idempotent, so a duplicate is harmless. */
export class RelayOutbox {
  private recovering: Promise<void> | null = null;
  private recoverAgain = false;

  constructor(
    private readonly outbox: Outbox,
    private readonly publisher: MessagePublisher,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly options: RelayOptions,
  ) {}

  async run(): Promise<RelayReport> {
    const now = this.clock.now();
    const nowMs = Date.parse(now);
    const iso = (ms: number) => new Date(ms).toISOString();
    const rows = await this.outbox.due({
      retryBefore: iso(nowMs - this.options.pendingGraceMs),
      staleSentBefore: iso(nowMs - this.options.staleSentMs),
      limit: this.options.batchSize,
    });
    const report: RelayReport = { published: 0, failed: 0, dead: 0 };
    const sendable: OutboxMessage[] = [];
    for (const row of rows.filter((r) => this.backoffElapsed(r, nowMs))) {
      if (row.attempts >= this.options.maxAttempts)
        await this.giveUp(row, `not consumed after ${row.attempts} sends`, now, report);
      else sendable.push(row);
    }
    // one producer request and one status update per topic
    for (const batch of groupBy(sendable, (row) => row.topic).values()) {
      try {
        await this.publisher.publishMany(batch);
        await this.outbox.markSentMany(
          batch.map((row) => row.messageId),
          now,
        );
        this.metrics.count('outbox_published', { topic: batch[0]!.topic }, batch.length);
        report.published += batch.length;
      } catch (error) {
        for (const row of batch) await this.giveUp(row, String(error), now, report);
      }
    }
    await this.publishLevels();
    return report;
  }

  /**
   * Recovery at start: a run now, not a relay period later, when a worker starts or is given partitions. The
   * rows a process that died had committed but not published (older than the pending grace) go out at once,
   * so their reservations are decided in seconds. Runs one at a time; a call during a run asks for one more.
   * Never throws: a failed run is logged, and the scheduled relay carries on.
   */
  recoverSoon(reason: string): Promise<void> {
    if (this.recovering) {
      this.recoverAgain = true;
      return this.recovering;
    }
    this.recovering = (async () => {
      do {
        this.recoverAgain = false;
        try {
          const report = await this.run();
          if (report.published + report.failed > 0)
            this.logger.info({ reason, ...report }, 'outbox recovered: rows left by earlier processes sent');
        } catch (error) {
          this.logger.warn({ reason, err: String(error) }, 'outbox recovery failed; the relay tries again');
        }
      } while (this.recoverAgain);
      this.recovering = null;
    })();
    return this.recovering;
  }

  /** Resolves once a recovery under way has ended. */
  async recovered(): Promise<void> {
    await this.recovering;
  }

  /** Keeps the outbox gauge current: a rising DEAD count is what operators alert on. */
  private async publishLevels(): Promise<void> {
    const counts = await this.outbox.countOpen();
    for (const [name, status] of Object.entries(OutboxStatus))
      if (status !== OutboxStatus.CONSUMED)
        this.metrics.gauge('outbox_rows', counts[status], { status: name.toLowerCase() });
  }

  private async giveUp(row: OutboxMessage, error: string, now: string, report: RelayReport): Promise<void> {
    const status = await this.outbox.markFailed(row.messageId, error, now, this.options.maxAttempts);
    report.failed += 1;
    if (status !== OutboxStatus.DEAD) return;
    report.dead += 1;
    this.metrics.count('outbox_dead', { topic: row.topic });
    this.logger.error({ messageId: row.messageId, attempts: row.attempts + 1, error }, 'outbox row is dead');
  }

  private backoffElapsed(row: OutboxMessage, nowMs: number): boolean {
    if (row.status !== OutboxStatus.FAILED) return true;
    const delay = this.options.backoffBaseMs * 2 ** Math.max(0, row.attempts - 1);
    return Date.parse(row.updatedAt) + delay <= nowMs;
  }
}

const groupBy = <T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> => {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(key(item)) ?? [];
    groups.set(key(item), list);
    list.push(item);
  }
  return groups;
};
