/**
 * How long a session hub waits before fetching `session.snapshot` after a delta that does not
 * apply (spec §6.2 rule 6). The first fetch goes at once: a missed delta is routine. Each further
 * one within `quietMs` of the previous waits twice as long as the last, up to `maxMs`, so a session
 * whose deltas keep failing (a broken upstream, or a delta kind we reject) is fetched now and then
 * instead of once per delta; after `quietMs` without one the next goes at once again.
 */
export interface ResyncBackoffOptions {
  /** Wait before the second fetch in a row; default 250 ms. */
  firstDelayMs?: number;
  /** Longest wait; default 30 s. */
  maxMs?: number;
  /** Time without a fetch after which the sequence starts over; default 60 s. */
  quietMs?: number;
  now?: () => number;
}

export class ResyncBackoff {
  private readonly firstDelayMs: number;
  private readonly maxMs: number;
  private readonly quietMs: number;
  private readonly now: () => number;
  /** Fetches in the current run of repeats. */
  private repeats = 0;
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(options: ResyncBackoffOptions = {}) {
    this.firstDelayMs = options.firstDelayMs ?? 250;
    this.maxMs = options.maxMs ?? 30_000;
    this.quietMs = options.quietMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Records a fetch about to be scheduled; returns how long it should wait first (ms). */
  next(): number {
    const now = this.now();
    if (now - this.lastAt > this.quietMs) this.repeats = 0;
    const delay = this.repeats === 0 ? 0 : Math.min(this.firstDelayMs * 2 ** (this.repeats - 1), this.maxMs);
    this.repeats += 1;
    // Measured from when the fetch will go, so a long wait does not count as quiet time.
    this.lastAt = now + delay;
    return delay;
  }
}
