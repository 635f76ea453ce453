import type { Readable, Writable } from "node:stream";
import { LineSplitter, OVERSIZED_LINE, type LineFrame } from "./ndjson-lines.js";
import { Deadline } from "../shared/deadline.js";
import { TickStartReading } from "../shared/tick-start-reading.js";
import { MESSAGES_IN_FLIGHT_BOUND, READ_ON_IN_FLIGHT } from "./in-flight-bound.js";
import type { ConnectionRecording } from "./recording/recording-folder.js";

/**
 * One JSON-RPC peer on a pair of byte streams, one message per line each way (NDJSON): stdin and
 * stdout of a command a client spawns, or one client of a Unix socket. It knows nothing of the
 * dialect: each line goes to the connection the dialect attached, which writes its answers and
 * notifications back through `send`. What it does for every dialect:
 *
 * - framing, with a bound on a line's length (ndjson-lines.ts);
 * - backpressure: while the peer leaves our output unread, or `MESSAGES_IN_FLIGHT_BOUND` lines
 *   are handled but not yet answered (their answers held in request order behind a slow one, or
 *   still being made), its input is not read either, so a flood of requests waits in the peer's
 *   pipe instead of in our memory (the lines of a chunk already read wait with it and are handled
 *   once the output drains and the answers catch up);
 * - optionally, the slow-consumer rule of the WebSocket routes: a peer with more than
 *   `maxBufferedBytes` unread (from earlier ticks) when there is more to send is disconnected;
 * - the lifecycle: `ended` says when the peer is done (its input ended and every line was handed
 *   on, or it is gone), `close()` stops reading, lets the lines in flight finish, then flushes and
 *   ends the output.
 *
 * The in-flight limit is the dialect's: only it knows which lines are requests and how to refuse
 * one in its own words (Ask: -32013), and a line that answers one of our own requests must never
 * be held back, since a request in flight may be waiting for it.
 */

export interface NdjsonConnection {
  /** Handles one line (never blank); settles once the line is dealt with (its answer, if any, sent). */
  receive(line: string): Promise<void>;
  /** A line longer than the bound arrived and was skipped; the dialect may tell the peer. */
  oversized(maxLineBytes: number): void;
  /** The peer is gone or the stream is closing: nothing more will be received or sent. */
  close(): void;
}

export interface NdjsonStreamOptions {
  /** Longest line accepted, in bytes (without its newline). */
  maxLineBytes: number;
  /** Unread output past which a peer that is sent more is disconnected; undefined: never (reading only pauses). */
  maxBufferedBytes?: number;
  /** Called once when the peer is disconnected for `maxBufferedBytes`. */
  onSlowConsumer?(): void;
  /**
   * A peer that sends no whole line within this long of connecting is disconnected (one that
   * never speaks would hold its slot for good). 0 or absent: never. For a socket's clients, not
   * for stdin, whose writer is the parent that spawned us.
   */
  firstLineTimeoutMs?: number;
  /** A peer that takes none of its backed-up output for this long is disconnected. 0 or absent: never. */
  stallTimeoutMs?: number;
  /** Called once when the peer is disconnected by one of the two deadlines above. */
  onDeadline?(stage: "idle" | "stalled"): void;
  /** A connection's receive() rejected (a dialect bug: it should answer its own failures). */
  onError?(error: unknown): void;
  /** Records every line received and written (`--record`); its owner closes it. */
  recording?: ConnectionRecording;
}

/**
 * Why a stream ended: its input ended, its output failed or closed (the peer went away), it was
 * too slow, it missed a deadline (sent no line in time, or took none of its output in time), or
 * close() was called.
 */
export type NdjsonEnd = "input ended" | "output closed" | "slow consumer" | "never spoke" | "stalled" | "closed";

export class NdjsonStream {
  /** Settles once, when the peer is done with the stream; the owner decides when to close() it. */
  readonly ended: Promise<NdjsonEnd>;
  /** Settles `ended` (the first call wins). */
  private finish!: (end: NdjsonEnd) => void;
  private readonly connection: NdjsonConnection;
  private readonly splitter: LineSplitter;
  /** Lines read but not handed to the connection yet (the output was backed up). */
  private readonly queue: LineFrame[] = [];
  private inputEnded = false;
  private stopped = false;
  private outputGone = false;
  private waitingForDrain = false;
  /** Reading waits for lines in flight to settle (in-flight-bound.ts). */
  private waitingForAnswers = false;
  private closing: Promise<{ flushed: boolean }> | undefined;
  private inFlightCount = 0;
  /**
   * What the peer left unread before this tick's first line was written: the lines of one tick (a
   * subscription's replayed backlog) are one burst, not a sign that it reads too slowly; the
   * WebSocket routes apply the same rule.
   */
  private readonly unreadBeforeThisTick = new TickStartReading(() => this.output.writableLength);
  private readonly settledWaiters = new Set<() => void>();
  private readonly firstLine: Deadline;
  private readonly stall: Deadline;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    connect: (send: (line: string) => void) => NdjsonConnection,
    private readonly options: NdjsonStreamOptions,
  ) {
    this.ended = new Promise((resolve) => (this.finish = resolve));
    this.splitter = new LineSplitter(options.maxLineBytes);
    this.connection = connect((line) => this.send(line));
    this.firstLine = new Deadline(options.firstLineTimeoutMs ?? 0, () => this.missedDeadline("never spoke"));
    this.stall = new Deadline(options.stallTimeoutMs ?? 0, () => this.waitingForDrain && this.missedDeadline("stalled"));
    this.firstLine.arm();

    output.on("error", this.onOutputGone);
    output.on("close", this.onOutputGone);
    output.on("drain", this.onDrain);
    input.on("data", this.onData);
    input.on("end", this.onInputEnd);
    // An input that fails or closes without ending is an ended input too (the peer is gone).
    input.on("error", this.onInputEnd);
    input.on("close", this.onInputEnd);
  }

  /** Lines handed to the connection whose handling has not settled. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Resolves once no line is in flight, or after `timeoutMs` (undefined: however long that takes). */
  whenSettled(timeoutMs?: number): Promise<void> {
    if (this.inFlightCount === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.settledWaiters.delete(done);
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, timeoutMs);
      this.settledWaiters.add(done);
    });
  }

  /**
   * Stops reading, gives the lines in flight up to `graceMs` to settle (their answers go out), closes
   * the connection, then ends the output and waits up to `graceMs` for it to flush. Lines read but
   * not yet handled are handled first (a closing dialect answers them, e.g. as refused). Resolves
   * with whether everything written reached the peer's side of the stream.
   */
  close(graceMs = 1000): Promise<{ flushed: boolean }> {
    this.closing ??= this.shutDown(graceMs);
    return this.closing;
  }

  private async shutDown(graceMs: number): Promise<{ flushed: boolean }> {
    this.firstLine.disarm();
    this.stall.disarm();
    this.stopReading();
    this.dispatchQueued(true);
    await this.whenSettled(graceMs);
    this.connection.close();
    this.finish("closed");
    if (this.outputGone || this.output.destroyed) return { flushed: false };
    const flushed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), graceMs);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        resolve(ok);
      };
      this.output.once("finish", () => done(true));
      this.output.once("error", () => done(false));
    });
    this.output.end();
    return { flushed: await flushed };
  }

  private send(line: string): void {
    if (this.outputGone || this.output.destroyed || this.output.writableEnded) return;
    const bound = this.options.maxBufferedBytes;
    if (bound !== undefined && this.unreadBeforeThisTick.get() > bound) {
      this.cutOff("slow consumer");
      this.options.onSlowConsumer?.();
      return;
    }
    // The one place lines leave, whichever dialect wrote them.
    const sent = escapeLineSeparators(line);
    this.options.recording?.server(sent);
    this.output.write(`${sent}\n`);
    if (this.output.writableNeedDrain) this.pauseReading();
  }

  /** Disconnects the peer: nothing more is read from it or written to it. */
  private cutOff(end: NdjsonEnd): void {
    this.outputGone = true;
    this.firstLine.disarm();
    this.stall.disarm();
    this.finish(end);
    this.stopReading();
    this.output.destroy();
  }

  private missedDeadline(end: "never spoke" | "stalled"): void {
    if (this.outputGone || this.closing) return;
    this.cutOff(end);
    this.options.onDeadline?.(end === "never spoke" ? "idle" : "stalled");
  }

  private readonly onData = (chunk: Buffer | string) => {
    if (this.stopped) return;
    for (const frame of this.splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)) this.queue.push(frame);
    this.dispatchQueued(false);
  };

  private readonly onInputEnd = () => {
    if (this.inputEnded) return;
    this.inputEnded = true;
    if (!this.stopped) this.queue.push(...this.splitter.end());
    this.dispatchQueued(false);
  };

  private readonly onDrain = () => {
    if (!this.waitingForDrain) return;
    this.waitingForDrain = false;
    this.stall.disarm();
    this.readOn();
  };

  /** Hands on the lines that waited, then reads again unless something is still in the way. */
  private readOn(): void {
    this.dispatchQueued(false);
    if (!this.held() && !this.stopped && !this.inputEnded) this.input.resume();
  }

  private held(): boolean {
    return this.waitingForDrain || this.waitingForAnswers;
  }

  private readonly onOutputGone = () => {
    if (this.outputGone) return;
    this.outputGone = true;
    this.firstLine.disarm();
    this.stall.disarm();
    // Nobody reads our answers any more: stop taking work for them.
    this.stopReading();
    this.queue.length = 0;
    this.finish("output closed");
  };

  /** Hands queued lines to the connection until the output backs up (unless `regardless`). */
  private dispatchQueued(regardless: boolean): void {
    while (this.queue.length > 0) {
      if (!regardless && (this.waitingForDrain || this.output.writableNeedDrain)) return this.pauseReading();
      if (!regardless && (this.waitingForAnswers || this.inFlightCount >= MESSAGES_IN_FLIGHT_BOUND)) return this.pauseForAnswers();
      const frame = this.queue.shift()!;
      if (frame === OVERSIZED_LINE) {
        this.firstLine.disarm();
        this.connection.oversized(this.options.maxLineBytes);
      }
      else this.dispatch(frame);
    }
    if (this.inputEnded && !this.stopped) this.finish("input ended");
  }

  private dispatch(line: string): void {
    this.firstLine.disarm();
    // The one place a peer's lines arrive (a line too long to read is skipped unread, and not recorded).
    this.options.recording?.client(line);
    this.inFlightCount++;
    this.connection.receive(line).then(
      () => this.lineSettled(),
      (error: unknown) => {
        this.lineSettled();
        this.options.onError?.(error);
      },
    );
  }

  private lineSettled(): void {
    this.inFlightCount--;
    if (this.inFlightCount === 0) for (const wake of [...this.settledWaiters]) wake();
    if (this.waitingForAnswers && this.inFlightCount <= READ_ON_IN_FLIGHT) {
      this.waitingForAnswers = false;
      this.readOn();
    }
  }

  private pauseReading(): void {
    if (this.outputGone) return;
    this.waitingForDrain = true;
    this.stall.arm();
    this.input.pause();
  }

  private pauseForAnswers(): void {
    if (this.outputGone) return;
    this.waitingForAnswers = true;
    this.input.pause();
  }

  /** Takes no more input (what was read already is still handed on); close() does it too. */
  stopReading(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.input.off("data", this.onData);
    this.input.pause();
  }
}

/**
 * U+2028 and U+2029 written as JSON escapes: JSON allows them raw inside strings, but line readers
 * split on them (Node 24's readline does), which would cut one message in two. They can stand only
 * inside strings, where the escape means the same character.
 */
function escapeLineSeparators(line: string): string {
  return /[\u2028\u2029]/.test(line) ? line.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029") : line;
}
