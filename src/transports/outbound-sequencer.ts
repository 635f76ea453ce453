/**
 * The order of everything one connection writes to its client, whatever the dialect: a response
 * goes out before the notifications its request causes, and responses go out in the order their
 * requests arrived.
 *
 * A connection reserves a response's place when the request arrives (`reserve`), in arrival order.
 * Any other message (a notification, a request to the client) is written at once when no reserved
 * response is still open ahead of it; otherwise it waits behind the open ones. Which request caused
 * an event cannot be told reliably (a turn's first events are emitted while `session/send` waits for
 * them), so every message that arises while a request is open is treated as possibly its
 * consequence: it is held at most until the responses reserved before it are written, never
 * reordered among the other messages, never dropped while the connection is open.
 *
 * Some clients mishandle a response that arrives in the same read as what follows it (the AI SDK's
 * Codex app-server provider hangs when a turn's first notifications share a chunk with the
 * `turn/start` response): with `pauseAfterResponse`, what follows a response is written one
 * event-loop turn later, in a write of its own.
 */

export interface OutboundSequencerOptions {
  /** After writing a response, write what follows it on a later event-loop turn (see above). */
  pauseAfterResponse?: boolean;
}

/** The place of one response in a connection's outbound stream. */
export interface ResponseSlot<M = string> {
  /**
   * Supplies the response (`undefined`: the request needs none, e.g. a notification); resolves once
   * it was written, or dropped because the connection closed. Only the first call counts.
   */
  fill(text: M | undefined): Promise<void>;
}

/** Written entries kept at the front of the queue before it is compacted. */
const COMPACT_AFTER = 1024;

interface Entry<M> {
  /** Ready to write: always for a message, once filled for a response. */
  ready: boolean;
  text: M | undefined;
  isResponse: boolean;
  /** Called once the entry was written or dropped. */
  done?: () => void;
}

/** `M`: what the connection writes (text, or a message shared with other connections). */
export class OutboundSequencer<M = string> {
  private readonly queue: Array<Entry<M>> = [];
  /** Index of the first entry not yet written (entries before it are spent). */
  private head = 0;
  private paused = false;
  private closed = false;

  constructor(
    private readonly write: (text: M) => void,
    private readonly options: OutboundSequencerOptions = {},
  ) {}

  /** Reserves the place of a response: call it when the request arrives, in arrival order. */
  reserve(): ResponseSlot<M> {
    const entry: Entry<M> = { ready: false, text: undefined, isResponse: true };
    const written = new Promise<void>((resolve) => (entry.done = resolve));
    if (this.closed) entry.done!();
    else this.queue.push(entry);
    return {
      fill: (text) => {
        if (!entry.ready) {
          entry.ready = true;
          entry.text = text;
          this.flush();
        }
        return written;
      },
    };
  }

  /** A message that is not a response: written after every response reserved before it. */
  send(text: M): void {
    if (this.closed) return;
    if (this.head === this.queue.length && !this.paused) return this.write(text);
    this.queue.push({ ready: true, text, isResponse: false });
  }

  /**
   * Writes what is ready at the head of the queue (ignoring a pause: nothing follows any more),
   * then drops the rest; nothing is written afterwards.
   */
  close(): void {
    if (this.closed) return;
    this.paused = false;
    this.flush(true);
    this.closed = true;
    for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.done?.();
    this.queue.length = 0;
    this.head = 0;
  }

  private flush(closing = false): void {
    while (this.head < this.queue.length && !this.paused) {
      const entry = this.queue[this.head]!;
      if (!entry.ready) break;
      this.head++;
      if (entry.text !== undefined) this.write(entry.text);
      entry.done?.();
      if (!closing && entry.isResponse && entry.text !== undefined && this.options.pauseAfterResponse && this.head < this.queue.length) {
        this.paused = true;
        setImmediate(() => {
          this.paused = false;
          if (!this.closed) this.flush();
        });
      }
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
}
