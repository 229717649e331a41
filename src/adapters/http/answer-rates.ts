/**
 * Order answers per second in this process, for the live dashboard: the last whole second, so the figure
 * does not sag while the current second fills up. Accepted = reserved; rejected = every other answer code.
 */
export class AnswerRates {
  private second = 0;
  private current = { accepted: 0, rejected: 0 };
  private last = { accepted: 0, rejected: 0 };

  constructor(private readonly nowMs: () => number = Date.now) {}

  mark(accepted: boolean): void {
    this.roll();
    if (accepted) this.current.accepted += 1;
    else this.current.rejected += 1;
  }

  perSecond(): { acceptedPerSecond: number; rejectedPerSecond: number } {
    this.roll();
    return { acceptedPerSecond: this.last.accepted, rejectedPerSecond: this.last.rejected };
  }

  private roll(): void {
    const second = Math.floor(this.nowMs() / 1000);
    if (second === this.second) return;
    this.last = second === this.second + 1 ? this.current : { accepted: 0, rejected: 0 };
    this.current = { accepted: 0, rejected: 0 };
    this.second = second;
  }
}
