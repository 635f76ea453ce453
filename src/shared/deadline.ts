/**
 * A deadline that can be armed and disarmed again and again: while armed, `onExpired` runs once
 * `ms` have passed without a disarm. Used for the network deadlines that no library keeps for us
 * (a stalled reader, a client that never speaks). `ms` 0 never expires. The timer is unref'd: a
 * deadline never keeps the process alive.
 */
export class Deadline {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly ms: number,
    private readonly onExpired: () => void,
  ) {}

  get armed(): boolean {
    return this.timer !== undefined;
  }

  /** Starts the clock unless it already runs (an armed deadline keeps its start). */
  arm(): void {
    if (this.ms <= 0 || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onExpired();
    }, this.ms);
    this.timer.unref();
  }

  /** Starts the clock again from now. */
  rearm(): void {
    this.disarm();
    this.arm();
  }

  disarm(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
