import type { Event } from "../../generated/ask-v1.0.js";
import type { Log } from "../shared/log.js";
import type { LiveBatch, SessionLogStore, StoredEvent } from "../store/index.js";
import type { EventLog } from "./event-log.js";

/**
 * Keeps a session's local event log a copy of its shared log in the store, so every reader of
 * `hub.log` (Ask cursors, Codex threads, ACP links) keeps reading synchronously: events arrive
 * live by pub/sub, in seq order; a batch that does not follow what is here has its gap filled from
 * the store first; a seq already here is dropped. When the store's log began a new epoch (its
 * history was lost) the local log restarts, so that nobody mistakes the new numbers for the old.
 *
 * Work is done one step at a time (`chain`), so live batches, gap fills and catch-ups never
 * interleave.
 */
export class LogMirror {
  private epochSeen: string | undefined;
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;
  private firstWaiters: Array<() => void> = [];

  constructor(
    private readonly store: SessionLogStore,
    private readonly log: EventLog,
    private readonly retention: number,
    private readonly logLine: Log,
  ) {}

  get epoch(): string | undefined {
    return this.epochSeen;
  }

  /** Subscribes, then loads the retained end of the shared log; live batches heard meanwhile follow it. */
  async start(): Promise<void> {
    const loading = this.enqueue(() => this.catchUpNow());
    this.unsubscribe ??= await this.store.subscribe({
      batch: (batch) => void this.enqueue(() => this.take(batch)),
      reconnected: () => void this.enqueue(() => this.catchUpNow()),
      // A batch of this replica's own append is here before pub/sub brings it back: take() would drop it.
      has: (epoch, lastSeq) => epoch === this.epochSeen && lastSeq <= this.log.newestSeq,
    });
    await loading;
    // A batch published between the load and the subscription: read it now.
    await this.catchUp();
  }

  /** Reads whatever the store has beyond the local log (a resume checks this before trusting the local newest seq). */
  catchUp(): Promise<void> {
    return this.enqueue(() => this.catchUpNow());
  }

  /** The outcome of this replica's own append: the same events pub/sub brings, sooner. */
  accept(batch: LiveBatch): void {
    void this.enqueue(() => this.take(batch));
  }

  /** Resolves once the log holds an event, or after `timeoutMs`. */
  waitForFirst(timeoutMs: number): Promise<void> {
    if (this.log.newestSeq > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.firstWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.chain.then(step).catch((error: unknown) => {
      this.logLine("warn", "session log mirror could not read the store", { sessionId: this.store.sessionId, error: String(error) });
    });
    this.chain = next;
    return next;
  }

  private async take(batch: LiveBatch): Promise<void> {
    if (this.epochSeen !== undefined && batch.epoch !== this.epochSeen) {
      // A new epoch: whatever the batch says, the store knows what the new log holds.
      await this.catchUpNow();
      return;
    }
    this.epochSeen ??= batch.epoch;
    const first = batch.events[0];
    if (first && this.log.newestSeq > 0 && first.seq > this.log.newestSeq + 1) await this.fill(first.seq - 1);
    this.insert(batch.events);
  }

  private async catchUpNow(): Promise<void> {
    const info = await this.store.info();
    if (info.epoch === undefined) return; // nothing written yet (or lost and not yet begun again)
    if (this.epochSeen !== undefined && info.epoch !== this.epochSeen) {
      this.logLine("warn", "the shared session log began a new epoch: its history was lost", { sessionId: this.store.sessionId });
      this.log.restart();
    }
    this.epochSeen = info.epoch;
    const from = this.log.newestSeq > 0 ? this.log.newestSeq : Math.max(0, info.newestSeq - this.retention);
    this.insertAfter(await this.store.read(from));
  }

  /** Reads the events after the local newest up to `untilSeq` (retention permitting). */
  private async fill(untilSeq: number): Promise<void> {
    this.insertAfter(await this.store.read(this.log.newestSeq, untilSeq - this.log.newestSeq));
  }

  /**
   * Inserts events read to follow the local newest. When the store no longer has the ones right
   * after it (this copy fell further behind than the retention, e.g. during a long outage), the
   * copy starts over from what is left, behind a `session.reset {cause:"resync"}` of its own at
   * the seq before: every reader is told, none skips the gap silently.
   */
  private insertAfter(events: readonly StoredEvent[]): void {
    const first = events[0];
    if (first && this.log.newestSeq > 0 && first.seq > this.log.newestSeq + 1) {
      this.logLine("warn", "events between the local copy and the shared log were trimmed; starting the copy over with a reset", {
        sessionId: this.store.sessionId,
        newestSeq: this.log.newestSeq,
        oldestAvailable: first.seq,
      });
      this.log.restart();
      this.log.insert({ type: "session.reset", seq: first.seq - 1, payload: { cause: "resync" } });
    }
    this.insert(events);
  }

  private insert(events: readonly StoredEvent[]): void {
    for (const event of events) {
      if (event.seq <= this.log.newestSeq) continue;
      if (this.log.newestSeq > 0 && event.seq !== this.log.newestSeq + 1) {
        this.logLine("warn", "session log mirror skipped an event out of order", { sessionId: this.store.sessionId, seq: event.seq, newestSeq: this.log.newestSeq });
        return;
      }
      this.log.insert(event as Event);
    }
    if (this.log.newestSeq > 0) for (const wake of this.firstWaiters.splice(0)) wake();
  }
}
