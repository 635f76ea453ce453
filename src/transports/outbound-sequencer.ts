import { currentEventCause, writeWithCause, type EventCause } from "../shared/event-cause.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { ConnectionOrder } from "./outbound-policy.js";

/**
 * The only writer of one connection, whatever the dialect: it writes responses, and the
 * notifications and requests to the client, in the order the dialect's policy asks for
 * (outbound-policy.ts).
 *
 * A connection reserves a response's place when the request arrives (`reserve`), in arrival
 * order; the place carries the request's cause, which the request's method passes along with what
 * it brings about. Then:
 * - responses go out in arrival order (`answers: "arrival"`) or each as soon as it is made;
 * - a message caused by a request waits until that request's response has been written and then
 *   released as `caused` says (with it, a later event-loop turn, or a delay);
 * - a message without a cause is written at once (`uncaused: "unrelated"`), or taken as caused by
 *   every request still open when it is sent;
 * - whatever waits is written in the order it was queued: a message never passes one queued
 *   before it, and with `answers: "arrival"` nor does a response;
 * - nothing is dropped while the connection is open. On close, what is ready goes out (a response
 *   already written releases what it caused at once: nothing follows any more), the rest is dropped.
 */

/** The place of one response in a connection's outbound stream. */
export interface ResponseSlot<M = string> {
  /** The request, as the cause of what its method sends. */
  readonly cause: RequestCause;
  /**
   * Supplies the response (`undefined`: the request needs none, e.g. a notification); resolves once
   * it was written, or dropped because the connection closed. Only the first call counts.
   */
  fill(text: M | undefined): Promise<void>;
}

/** What the sequencer knows of one request as a cause. */
class Cause {
  /** Its response was written (or it needed none). */
  answered = false;
  /** What it caused may be written. */
  released = false;

  /** `owner`: the sequencer of the connection the request came on. */
  constructor(readonly owner: object) {}
}

interface Entry<M> {
  text: M | undefined;
  /** A response: ready once filled; once written, its request is answered. */
  answers?: Cause;
  filled?: boolean;
  /** A message: ready once this request (or each of these) was released. */
  after?: Cause | readonly Cause[];
  /** Called once the entry was written or dropped. */
  done?: () => void;
  /** The session event (or interaction) the message is part of, declared while it is written (event-cause.ts). */
  eventCause?: EventCause;
}

/** Written entries kept at the front of the queue before it is compacted. */
const COMPACT_AFTER = 1024;

/** `M`: what the connection writes (text, or a message shared with other connections). */
export class OutboundSequencer<M = string> {
  private readonly queue: Array<Entry<M>> = [];
  /** Index of the first entry not yet written (entries before it are spent). */
  private head = 0;
  /**
   * Requests whose caused messages may not be written yet; made when a request arrives and let go
   * once none is left, so an idle connection holds no set.
   */
  private open: Set<Cause> | undefined = undefined;
  private closed = false;

  constructor(
    private readonly write: (text: M) => void,
    private readonly order: ConnectionOrder,
  ) {}

  /** Reserves the place of a response: call it when the request arrives, in arrival order. */
  reserve(): ResponseSlot<M> {
    const cause = new Cause(this);
    if (this.closed) return { cause: cause as unknown as RequestCause, fill: () => Promise.resolve() };
    (this.open ??= new Set()).add(cause);
    const entry: Entry<M> = { text: undefined, answers: cause, filled: false };
    const written = new Promise<void>((resolve) => (entry.done = resolve));
    if (this.order.answers === "arrival") this.queue.push(entry);
    return {
      cause: cause as unknown as RequestCause,
      fill: (text) => {
        if (entry.filled) return written;
        entry.filled = true;
        // Closed meanwhile: dropped (an entry still queued was settled by close).
        if (this.closed) {
          entry.done!();
          return written;
        }
        entry.text = text;
        if (this.order.answers === "completion") this.writeEntry(entry);
        this.flush();
        return written;
      },
    };
  }

  /** A message that is not a response (a notification, a request to the client), caused by `causedBy` if given. */
  send(text: M, causedBy?: RequestCause): void {
    if (this.closed) return;
    const idle = this.head === this.queue.length;
    const cause = causedBy as unknown as Cause | undefined;
    const eventCause = currentEventCause();
    if (cause instanceof Cause && cause.owner === this) {
      if (idle && cause.released) return this.writeCaused(text, eventCause);
      this.queue.push({ text, after: cause, eventCause });
    } else if (this.order.uncaused === "unrelated" || (idle && this.open === undefined)) {
      this.writeCaused(text, eventCause);
    } else {
      const open = this.open === undefined ? [] : this.open.size === 1 ? this.open.values().next().value! : [...this.open];
      this.queue.push({ text, after: open, eventCause });
    }
  }

  /**
   * Writes what is ready at the head of the queue, counting a request already answered as
   * released (nothing follows any more), then drops the rest; nothing is written afterwards.
   */
  close(): void {
    if (this.closed) return;
    this.flush(true);
    this.closed = true;
    for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.done?.();
    this.queue.length = 0;
    this.head = 0;
    this.open = undefined;
  }

  private ready(entry: Entry<M>, closing: boolean): boolean {
    if (entry.answers) return entry.filled === true;
    const after = entry.after!;
    if (after instanceof Cause) return after.released || (closing && after.answered);
    return after.every((cause) => cause.released || (closing && cause.answered));
  }

  private flush(closing = false): void {
    while (this.head < this.queue.length) {
      const entry = this.queue[this.head]!;
      if (!this.ready(entry, closing)) break;
      this.head++;
      this.writeEntry(entry);
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
      // A response open for long while events stream in: let go of what was written.
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private writeEntry(entry: Entry<M>): void {
    if (entry.text !== undefined) this.writeCaused(entry.text, entry.eventCause);
    entry.done?.();
    if (entry.answers) this.answered(entry.answers, entry.text !== undefined);
  }

  /**
   * A request's response was written (`wrote`) or it needed none: what it caused follows as the
   * policy says (released at once, the caller flushes; or later, flushed then).
   */
  private answered(cause: Cause, wrote: boolean): void {
    cause.answered = true;
    const release = this.order.caused;
    if (!wrote || release === "with-response") return this.release(cause);
    const later = () => {
      if (this.closed) return;
      this.release(cause);
      this.flush();
    };
    if (release === "next-tick") setImmediate(later);
    else setTimeout(later, release.delayMs);
  }

  private writeCaused(text: M, eventCause: EventCause | undefined): void {
    writeWithCause(eventCause, () => this.write(text));
  }

  private release(cause: Cause): void {
    cause.released = true;
    this.open?.delete(cause);
    if (this.open?.size === 0) this.open = undefined;
  }
}
