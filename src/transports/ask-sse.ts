import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import type { SessionEventParams } from "../../generated/ask-v1.0.js";
import type { AskPeer } from "../ask/ask-surface.js";
import type { ConnectionRecording } from "./recording/recording-folder.js";
import { Deadline } from "../shared/deadline.js";
import { TickStartReading } from "../shared/tick-start-reading.js";

/**
 * One session's events as server-sent events: an Ask peer whose only way to speak is one-way
 * frames on an HTTP response. Each event becomes
 *
 *     id: <seq>
 *     event: session/event
 *     data: {"sessionId":…,"event":{"type":…,"seq":…,"payload":…}}
 *
 * (the `data` is the params of the WebSocket `session/event` notification), so a client that
 * reconnects with `Last-Event-ID` resumes after the last event it saw. Comment lines keep idle
 * connections (and proxies) from timing out. Reverse requests cannot be answered over SSE, so the
 * peer never opts in to them.
 *
 * Backpressure: once the body stream reports it is full, frames wait in a queue until it drains;
 * a client that still has more than `maxBufferedBytes` unread from earlier ticks when there is more
 * to send is disconnected, never allowed to grow memory without bound, and so is one that takes
 * nothing for `stallTimeoutMs` while the stream is full (heartbeats alone would take hours to
 * reach the byte bound, holding the connection all that time).
 *
 * `session.ended` is a session's last event: once its frame is written (after whatever still waits
 * in the queue), the stream ends. A client reconnecting with `Last-Event-ID` then finds no session.
 */

export interface AskSseOptions {
  tenant?: string;
  /** Interval of `: keepalive` comments. */
  heartbeatMs: number;
  /** Bytes that may wait for a slow client before it is disconnected. */
  maxBufferedBytes: number;
  /** Called once if the client is disconnected for reading too slowly. */
  onSlowConsumer?: () => void;
  /**
   * How long the stream may stay backed up with the client taking none of it (a reader that
   * stopped reading, or a peer gone without a word); then it is closed. 0 or absent: never.
   */
  stallTimeoutMs?: number;
  /** Called once if the client is disconnected for taking nothing for `stallTimeoutMs`. */
  onStalled?: () => void;
  /**
   * `serve --record`: each event written to the stream, as the `session/event` notification a
   * JSON-RPC connection gets (the frame's `data` is its params).
   */
  recording?: ConnectionRecording;
}

export interface AskSseStream {
  readonly peer: AskPeer;
  /** The response body (text/event-stream); frames written before it is sent wait in it. */
  readonly body: PassThrough;
  /** Ends the stream, optionally with a last comment saying why. */
  close(comment?: string): void;
  /** Resolves once the stream ended for any reason (client gone, closed, slow consumer). */
  readonly closed: Promise<void>;
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  // nginx and similar proxies must pass each frame on at once instead of buffering the response.
  "x-accel-buffering": "no",
} as const;

export function openAskSseStream(options: AskSseOptions): AskSseStream {
  const body = new PassThrough();
  const queue: string[] = [];
  let queuedBytes = 0;
  let waitingForDrain = false;
  /** Unread bytes when this tick's first frame was written. */
  const unreadBeforeTick = new TickStartReading(() => queuedBytes + body.writableLength);
  let ended = false;
  /** The session ended: the stream ends as soon as the queue is written. */
  let endWhenWritten = false;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const stall = new Deadline(options.stallTimeoutMs ?? 0, () => {
    if (ended || !waitingForDrain) return;
    options.onStalled?.();
    finish();
    body.destroy();
  });
  const backedUp = () => {
    waitingForDrain = true;
    stall.arm();
    body.once("drain", flush);
  };

  const finish = () => {
    if (ended) return;
    ended = true;
    stall.disarm();
    clearInterval(heartbeat);
    queue.length = 0;
    markClosed();
  };

  const write = (frame: string) => {
    if (ended) return;
    const unread = unreadBeforeTick.get();
    if (waitingForDrain) {
      queue.push(frame);
      queuedBytes += Buffer.byteLength(frame);
      // Only what the client left unread before this tick counts: the frames of one tick (a
      // subscription's replayed backlog, written before the response even starts) are one burst,
      // not a sign of a slow reader; and one frame larger than the bound still goes to a reader
      // that keeps up. The WebSocket routes apply the same rule.
      if (unread > options.maxBufferedBytes) {
        options.onSlowConsumer?.();
        finish();
        body.destroy();
      }
      return;
    }
    if (!body.write(frame)) backedUp();
  };

  const flush = () => {
    // The client took what waited: the stall deadline starts again if the stream fills up again.
    waitingForDrain = false;
    stall.disarm();
    while (queue.length && !waitingForDrain && !ended) {
      const frame = queue.shift()!;
      queuedBytes -= Buffer.byteLength(frame);
      if (!body.write(frame)) backedUp();
    }
    if (endWhenWritten && !waitingForDrain) endStream();
  };

  /** Ends the response once everything written so far is out (end() flushes what the body holds). */
  const endStream = () => {
    if (ended) return;
    finish();
    body.end();
  };

  const heartbeat = setInterval(() => {
    // A heartbeat only matters on an idle stream; a backed-up one has data waiting already.
    if (!waitingForDrain) write(": keepalive\n\n");
  }, options.heartbeatMs);

  body.on("close", finish);
  body.on("error", finish);
  // The response head goes out with the first bytes; without them a quiet session would leave the
  // client waiting for headers until the first heartbeat.
  write(": open\n\n");

  const peer: AskPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    capabilities: { reverseRequests: false },
    notify(_method: "session/event", params: SessionEventParams) {
      write(sessionEventFrame(params));
      // Not when the stream had ended, or just ended for a client too slow to read it.
      if (!ended) options.recording?.server(JSON.stringify({ jsonrpc: "2.0", method: "session/event", params }));
      if (params.event.type !== "session.ended" || ended) return;
      endWhenWritten = true;
      if (!waitingForDrain) endStream();
    },
    request() {
      return Promise.reject(new Error("a server-sent events stream cannot answer reverse requests"));
    },
    get closed() {
      return ended;
    },
  };

  return {
    peer,
    body,
    closed,
    close(comment?: string) {
      if (ended) return;
      const backedUp = waitingForDrain;
      finish();
      // A client that is behind would hold the response (and a shutting-down server) open for as
      // long as it does not read; it loses the tail instead and resumes with Last-Event-ID.
      if (backedUp) return void body.destroy();
      if (comment !== undefined) body.write(`: ${comment}\n\n`);
      body.end();
    },
  };
}

/**
 * The frame of one event, made once for all its streams: the log hands an event to every
 * subscriber in a row, so the last event's frame is the one asked for again (see the
 * notification of ask-jsonrpc.ts, which does the same for JSON-RPC connections).
 */
let lastFrame: { event: SessionEventParams["event"]; sessionId: string | undefined; frame: string } | undefined;

function sessionEventFrame(params: SessionEventParams): string {
  if (lastFrame?.event !== params.event || lastFrame.sessionId !== params.sessionId) {
    lastFrame = { event: params.event, sessionId: params.sessionId, frame: `id: ${params.event.seq}\nevent: session/event\ndata: ${JSON.stringify(params)}\n\n` };
  }
  return lastFrame.frame;
}
