import type { Dialect } from "../../registry/index.js";
import type { RecordedDialect } from "../../transports/recording/transcript-lines.js";
import { TranscriptReader } from "../../validation/recording-lines.js";
import { CallPairing } from "./call-pairing.js";
import type { InspectedFrame } from "./connection-trace.js";
import { frameFacts } from "./frame-facts.js";
import { frameVerdict, withSequenceGap } from "./frame-verdict.js";
import { SequenceGaps } from "./sequence-gaps.js";

/**
 * A transcript dropped on the inspector's page, checked offline: read line by line by the same
 * reader and checker `tau-gateway validate` runs (a recording's header sets the dialect; each
 * line's verdict is the one validate reports on it), then laid out as the page's frame rows, with
 * the inspector's own sequence-gap finding and request/response pairing on top.
 */

/** The connection name offline frames carry (the page keys rows by connection and index). */
export const TRANSCRIPT_CONNECTION = "transcript";

/** A line of the transcript as a frame row: `index` is its line number; direction and time only when the line gives them. */
export type TranscriptFrame = Omit<InspectedFrame, "direction" | "time"> & { direction?: "client" | "server"; time?: string };

export interface TranscriptVerdicts {
  /** The dialect the recording's header (or the caller) named; absent when each line's was detected. */
  dialect?: RecordedDialect;
  /** Lines read, blank ones and the header included. */
  lines: number;
  /** As `tau-gateway validate` counts them: lines holding a message that is valid, or not. */
  valid: number;
  invalid: number;
  /** Frames validate finds valid but the inspector flags for a sequence gap. */
  sequenceGaps: number;
  frames: TranscriptFrame[];
}

const LINE_BREAK = /\r\n|\n|\r/;

/** Checks a whole transcript; `dialect` forces one, as validate's --dialect does. */
export function transcriptVerdicts(text: string, options: { dialect?: Dialect } = {}): TranscriptVerdicts {
  const reader = new TranscriptReader({ dialect: options.dialect });
  const lines = text.split(LINE_BREAK);
  // No line after a final line break.
  if (lines.at(-1) === "") lines.pop();
  const pairing = new CallPairing();
  const gaps = new Map<RecordedDialect, SequenceGaps>();
  const result: TranscriptVerdicts = { dialect: options.dialect, lines: lines.length, valid: 0, invalid: 0, sequenceGaps: 0, frames: [] };
  lines.forEach((line, i) => {
    const read = reader.read(line);
    if (read.type === "header") result.dialect ??= read.dialect;
    if (read.type !== "message") return;
    const { verdict, direction, time } = read;
    if (verdict.ok) result.valid++;
    else result.invalid++;
    const dialect: RecordedDialect = verdict.dialect ?? result.dialect ?? "ask";
    let sequence = gaps.get(dialect);
    if (!sequence) gaps.set(dialect, (sequence = new SequenceGaps(dialect)));
    const parsed = read.message !== undefined || read.text === undefined;
    const frame: TranscriptFrame = {
      connection: TRANSCRIPT_CONNECTION,
      dialect,
      index: i + 1,
      ...(parsed ? frameFacts(dialect, read.message) : { kind: "other" as const }),
      verdict: withSequenceGap(frameVerdict(verdict), parsed ? sequence.observe(direction, read.message) : undefined),
    };
    if (direction) frame.direction = direction;
    if (time) frame.time = time;
    if (parsed) frame.message = JSON.stringify(read.message);
    else frame.raw = read.text;
    if (frame.verdict.status === "sequence-gap") result.sequenceGaps++;
    const at = time === undefined ? undefined : Date.parse(time);
    const answers = pairing.pair(frame, at === undefined || Number.isNaN(at) ? undefined : at);
    if (answers) frame.answers = answers;
    result.frames.push(frame);
  });
  return result;
}
