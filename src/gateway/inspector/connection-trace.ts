import type { Dialect } from "../../registry/index.js";
import type { EventCause } from "../../shared/event-cause.js";
import { OWN_JSON_BOUNDS } from "../../shared/json-bounds.js";
import { headerLine, type RecordedDialect } from "../../transports/recording/transcript-lines.js";
import { parseMessage, parseMessageAndHandOver } from "../../transports/jsonrpc-envelope.js";
import { TranscriptChecker } from "../../validation/transcript.js";
import { CallPairing } from "./call-pairing.js";
import { clientInfo, frameFacts, type FrameFacts } from "./frame-facts.js";
import { frameVerdict, withSequenceGap, type FrameVerdict } from "./frame-verdict.js";
import { SequenceGaps } from "./sequence-gaps.js";

/**
 * One client connection as the inspector sees it: its frames, checked in order by the same
 * transcript checker `tau-gateway validate` runs on a recording of it (so the page and CI agree)
 * and for gaps in what the gateway numbers (sequence-gaps.ts),
 * requests paired with their answers, and the calls still waiting for one. Only the newest frames
 * are kept (by count and by bytes, and the hub may take the oldest for its bound over every
 * connection); the checker and the pairing see every frame.
 */

export interface ConnectionLimits {
  maxFrames: number;
  maxBytes: number;
}

export interface ConnectionInfo {
  id: string;
  dialect: RecordedDialect;
  transport: string;
  opened: string;
  closed?: string;
  tenant?: string;
  tokenId?: string;
  client?: { name?: string; version?: string };
  /** Calls (either way) sent and not answered yet, and since when the oldest has waited. */
  inflight: { count: number; oldestSince?: string };
  frames: number;
  /** Frames no longer kept (the oldest beyond the limits). */
  dropped: number;
}

export interface InspectedFrame extends FrameFacts {
  connection: string;
  dialect: RecordedDialect;
  /** Position in the connection, from 1; a batch's elements share a time and follow one another. */
  index: number;
  direction: "client" | "server";
  time: string;
  /** The element's JSON text, as recorded; absent when it was not JSON (then `raw` holds the text). */
  message?: string;
  raw?: string;
  batch?: true;
  verdict: FrameVerdict;
  /** For an answer: the index of the request it answers and how long that took (when both times are known). */
  answers?: { index: number; latencyMs?: number };
  /** What the gateway sent it because of: a session event (by seq) or an interaction it asks about (event-cause.ts). */
  cause?: EventCause;
}

export class ConnectionTrace {
  private readonly checker: TranscriptChecker;
  private readonly gaps: SequenceGaps;
  private readonly kept: InspectedFrame[] = [];
  private keptBytes = 0;
  private count = 0;
  private dropped = 0;
  private readonly calls = new CallPairing();
  private client: ConnectionInfo["client"];
  private closedAt: Date | undefined;

  constructor(
    readonly id: string,
    readonly dialect: RecordedDialect,
    readonly transport: string,
    readonly opened: Date,
    private readonly peer: { tenant?: string; tokenId?: string },
    private readonly limits: ConnectionLimits,
    /** Told of each frame it starts keeping (true) and stops keeping (false). */
    private readonly onKept: (frame: InspectedFrame, kept: boolean) => void = () => undefined,
  ) {
    this.checker = new TranscriptChecker({ dialect: dialect as Dialect });
    this.gaps = new SequenceGaps(dialect);
  }

  /** The tenant the connection authenticated as (none without tokens). */
  get tenant(): string | undefined {
    return this.peer.tenant;
  }

  get closed(): boolean {
    return this.closedAt !== undefined;
  }

  close(at = new Date()): void {
    this.closedAt ??= at;
  }

  /** Checks and keeps the messages of one text as it crossed the wire (a batch: one frame per element). */
  add(direction: "client" | "server", text: string, at = new Date(), cause?: EventCause): InspectedFrame[] {
    const time = at.toISOString();
    // Bounded first (json-bounds.ts): a frame the gateway refused for its shape costs nothing here
    // either. A client's message is parsed here before its connection parses it: that parse is
    // handed over to the connection, so the frame is parsed once. The gateway's own frames are
    // bounded only in depth: a long thread's history is one large response, and not a peer's doing.
    const parsed = direction === "client" ? parseMessageAndHandOver(text) : parseMessage(text, OWN_JSON_BOUNDS);
    if (parsed === undefined || !("value" in parsed)) {
      const frame: InspectedFrame = { connection: this.id, dialect: this.dialect, index: ++this.count, direction, time, raw: text, kind: "other", verdict: frameVerdict(this.checker.line(text)) };
      if (cause) frame.cause = cause;
      return [this.keep(frame, text.length)];
    }
    const { value } = parsed;
    const batch = Array.isArray(value) && value.length > 0;
    const elements: unknown[] = batch ? (value as unknown[]) : [value];
    return elements.map((element) => {
      // One line per frame, as a recording holds it (a client may send pretty-printed JSON).
      const json = batch || /[\r\n]/.test(text) ? JSON.stringify(element) : text;
      const facts = frameFacts(this.dialect, element);
      const verdict = withSequenceGap(frameVerdict(this.checker.message(direction, element)), this.gaps.observe(direction, element));
      const frame: InspectedFrame = { connection: this.id, dialect: this.dialect, index: ++this.count, direction, time, message: json, ...facts, verdict };
      if (batch) frame.batch = true;
      if (cause) frame.cause = cause;
      const answers = this.calls.pair(frame, at.getTime());
      if (answers) frame.answers = answers;
      if (direction === "client") this.client = clientInfo(element) ?? this.client;
      return this.keep(frame, json.length);
    });
  }

  private keep(frame: InspectedFrame, bytes: number): InspectedFrame {
    this.kept.push(frame);
    this.keptBytes += bytes;
    this.onKept(frame, true);
    while (this.kept.length > this.limits.maxFrames || (this.keptBytes > this.limits.maxBytes && this.kept.length > 1)) this.dropOldest();
    return frame;
  }

  /** Drops the oldest frame kept if it is `frame` (the hub's bound over every connection); whether it did. */
  dropIfOldest(frame: InspectedFrame): boolean {
    if (this.kept[0] !== frame) return false;
    this.dropOldest();
    return true;
  }

  /** Bytes of the frames kept. */
  get bytes(): number {
    return this.keptBytes;
  }

  private dropOldest(): void {
    const oldest = this.kept.shift()!;
    this.keptBytes -= frameBytes(oldest);
    this.onKept(oldest, false);
    this.dropped++;
  }

  frames(): readonly InspectedFrame[] {
    return this.kept;
  }

  info(): ConnectionInfo {
    const waiting = this.calls.waiting();
    const oldest = waiting.reduce<number | undefined>((min, call) => (call.at !== undefined && (min === undefined || call.at < min) ? call.at : min), undefined);
    return {
      id: this.id,
      dialect: this.dialect,
      transport: this.transport,
      opened: this.opened.toISOString(),
      closed: this.closedAt?.toISOString(),
      tenant: this.peer.tenant,
      tokenId: this.peer.tokenId,
      client: this.client,
      inflight: { count: waiting.length, oldestSince: oldest === undefined ? undefined : new Date(oldest).toISOString() },
      frames: this.count,
      dropped: this.dropped,
    };
  }

  /** The kept frames as a recording (`serve --record`'s format), which `tau-gateway validate` reads. */
  transcript(): string {
    const lines = [headerLine({ dialect: this.dialect, connection: this.id, transport: this.transport, started: this.opened }).trimEnd()];
    for (const frame of this.kept) {
      const head = `{"direction":${JSON.stringify(frame.direction)},"time":${JSON.stringify(frame.time)}`;
      if (frame.message === undefined) lines.push(`${head},"text":${JSON.stringify(frame.raw ?? "")}}`);
      else lines.push(`${head}${frame.batch ? ',"batch":true' : ""},"message":${frame.message}}`);
    }
    return `${lines.join("\n")}\n`;
  }
}

/** What a kept frame counts for in the bounds: the length of its text. */
export const frameBytes = (frame: InspectedFrame): number => (frame.message ?? frame.raw ?? "").length;
