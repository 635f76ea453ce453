import type { Event } from "../../generated/ask-v1.0.js";
import { withEventCause } from "../shared/event-cause.js";

/**
 * One session's sequenced event log (Ask protocol §2, §5): `seq` starts at 1 and grows by one per
 * event, the newest `retention` events stay readable, and listeners see every event once, in seq
 * order. Connections keep their own cursors into it; the log knows nothing about them.
 */

export type AskEvent = Event;

type Payload<T extends Event["type"]> = Extract<Event, { type: T }>["payload"];

const DEFAULT_RETENTION = 10_000;

/** A reader asked for events that were dropped to respect the retention limit. */
export class EventRetentionError extends Error {
  readonly oldestSeq: number;

  constructor(afterSeq: number, oldestSeq: number) {
    super(`events after seq ${afterSeq} are no longer retained; the oldest retained seq is ${oldestSeq}`);
    this.name = "EventRetentionError";
    this.oldestSeq = oldestSeq;
  }
}

export class EventLog {
  private readonly retention: number;
  /** Retained events are `buffer[head..]`; dropped slots before `head` are reclaimed in batches. */
  private buffer: Array<Event | undefined> = [];
  private head = 0;
  private lastSeq = 0;
  private readonly listeners = new Set<(event: Event) => void>();
  private readonly restartListeners = new Set<() => void>();
  /** Events appended but not yet handed to listeners (an append made from inside a listener waits here). */
  private readonly outbox: Event[] = [];
  private dispatching = false;
  private readonly onListenerError: ((error: unknown, event: Event) => void) | undefined;
  /** The session the log is of: what listeners send because of an event names it as their cause (event-cause.ts). */
  private readonly sessionId: string | undefined;

  /**
   * `onListenerError` receives what a listener throws (the event is logged and delivered to the
   * other listeners regardless); without it the first such error is rethrown from `append`.
   */
  constructor(options: { retention?: number; onListenerError?: (error: unknown, event: Event) => void; sessionId?: string } = {}) {
    const retention = options.retention ?? DEFAULT_RETENTION;
    if (!Number.isSafeInteger(retention) || retention < 1) {
      throw new RangeError(`event retention must be a positive integer, got ${String(retention)}`);
    }
    this.retention = retention;
    this.onListenerError = options.onListenerError;
    this.sessionId = options.sessionId;
  }

  get newestSeq(): number {
    return this.lastSeq;
  }

  get oldestSeq(): number {
    return this.lastSeq - this.size + 1;
  }

  private get size(): number {
    return this.buffer.length - this.head;
  }

  append<T extends Event["type"]>(type: T, payload: Payload<T>): Event {
    const event = { type, seq: this.lastSeq + 1, payload } as Event;
    this.lastSeq = event.seq;
    this.buffer.push(event);
    if (this.size > this.retention) this.dropOldest();
    this.outbox.push(event);
    this.dispatch();
    return event;
  }

  /**
   * Takes an event whose seq was allocated elsewhere (a log mirroring the shared store): a seq
   * already here is dropped (false), the next one is appended, and an empty log may begin at any
   * seq. A seq beyond the next one is a gap the caller must fill first (RangeError).
   */
  insert(event: Event): boolean {
    if (this.size === 0 && this.lastSeq === 0) this.lastSeq = event.seq - 1;
    if (event.seq <= this.lastSeq) return false;
    if (event.seq !== this.lastSeq + 1) throw new RangeError(`event seq ${event.seq} does not follow seq ${this.lastSeq}`);
    this.lastSeq = event.seq;
    this.buffer.push(event);
    if (this.size > this.retention) this.dropOldest();
    this.outbox.push(event);
    this.dispatch();
    return true;
  }

  /**
   * The history this log mirrored is gone (the shared log began a new epoch): everything is
   * dropped, numbering starts over, and restart listeners hear it before the new epoch's events.
   */
  restart(): void {
    this.buffer = [];
    this.head = 0;
    this.lastSeq = 0;
    for (const listener of [...this.restartListeners]) listener();
  }

  /** Called when restart() drops the history; returns the unsubscribe function. */
  onRestart(listener: () => void): () => void {
    const entry = () => listener();
    this.restartListeners.add(entry);
    return () => {
      this.restartListeners.delete(entry);
    };
  }

  /** Events with seq > afterSeq, at most `limit`; hasMore = more events exist after the last returned. */
  read(afterSeq: number, limit?: number): { events: Event[]; hasMore: boolean } {
    const from = Math.max(0, Math.floor(afterSeq));
    // Events after `from` are complete only if seq from+1 is still here (or was never written).
    if (from + 1 < this.oldestSeq) throw new EventRetentionError(from, this.oldestSeq);
    if (from >= this.lastSeq) return { events: [], hasMore: false };
    const start = this.head + (from + 1 - this.oldestSeq);
    const available = this.buffer.length - start;
    const count = limit === undefined ? available : Math.max(0, Math.min(Math.floor(limit), available));
    const events = this.buffer.slice(start, start + count) as Event[];
    return { events, hasMore: count < available };
  }

  /** Listener is called synchronously on append, in seq order; returns the unsubscribe function. */
  subscribe(listener: (event: Event) => void): () => void {
    // Wrapped so the same function subscribed twice is two independent subscriptions.
    const entry = (event: Event) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  private dropOldest(): void {
    this.buffer[this.head] = undefined;
    this.head += 1;
    // Reclaim the dropped prefix once it is as large as what is kept: amortised O(1) per append.
    if (this.head >= this.retention) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * Hands queued events to listeners one event at a time. A listener that appends (e.g. a
   * subscriber reacting to an event) only queues its event, so every listener still receives
   * events strictly in seq order. A throwing listener does not starve the others; its error goes
   * to `onListenerError`, or the first one is rethrown once everything was delivered.
   */
  private dispatch(): void {
    if (this.dispatching) return;
    this.dispatching = true;
    let failure: { error: unknown } | undefined;
    try {
      for (let event = this.outbox.shift(); event; event = this.outbox.shift()) {
        const current = event;
        const deliver = () => {
          for (const listener of [...this.listeners]) {
            if (!this.listeners.has(listener)) continue; // unsubscribed by an earlier listener
            try {
              listener(current);
            } catch (error) {
              if (this.onListenerError) this.onListenerError(error, current);
              else failure ??= { error };
            }
          }
        };
        if (this.sessionId === undefined) deliver();
        else withEventCause({ sessionId: this.sessionId, seq: current.seq, type: current.type }, deliver);
      }
    } finally {
      this.dispatching = false;
    }
    if (failure) throw failure.error;
  }
}
