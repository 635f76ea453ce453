import type { Dialect } from "../registry/index.js";
import type { Sender } from "../registry/model.js";
import { parseBoundedJson } from "../shared/json-bounds.js";
import { isObject } from "../shared/unknown-values.js";
import { TranscriptChecker, type LineVerdict, type TranscriptOptions } from "./transcript.js";
import { ProtocolValidators } from "./validator.js";

/**
 * A transcript or recording read line by line, as `tau-gateway validate` reads it (and the
 * inspector, for a transcript dropped on its page): besides messages, a recording (`serve
 * --record`, `--record FILE`) holds a header, which names the dialect of the whole file, and text
 * a peer sent that was not JSON, kept as it came under `text`.
 */

/** One line, read: blank, the recording's header, or a message (or what stands for one) with its verdict. */
export type ReadLine =
  | { type: "blank" }
  | { type: "header"; dialect: Dialect }
  | {
      type: "message";
      verdict: LineVerdict;
      /** Who sent it, when the line says (`{"direction":…,"message":…}`); a bare message does not. */
      direction?: Sender;
      /** The message, when the line held JSON; else `text` holds what came. */
      message?: unknown;
      text?: string;
      /** The line's `time`, when it has one (recordings do). */
      time?: string;
    };

export class TranscriptReader {
  private checker: TranscriptChecker;
  private seenLine = false;

  /**
   * A recording's header sets its file's dialect; `options.dialect` (validate's --dialect) is for
   * files without one. The header wins: the gateway wrote it knowing the connection's dialect, and a
   * folder of recordings (`serve --record`) mixes dialects under one --dialect.
   */
  constructor(
    private readonly options: TranscriptOptions = {},
    private readonly validators = ProtocolValidators.shared(),
  ) {
    this.checker = new TranscriptChecker(options, validators);
  }

  read(text: string): ReadLine {
    if (text.trim() === "") return { type: "blank" };
    if (!this.seenLine) {
      this.seenLine = true;
      // A recording's header: the file's dialect (unless one was forced), not a message.
      const recorded = recordingDialect(text, this.validators.dialects, this.checker);
      if (recorded) {
        this.checker = new TranscriptChecker({ ...this.options, dialect: recorded }, this.validators);
        return { type: "header", dialect: recorded };
      }
    }
    return readMessageLine(this.checker, text);
  }
}

/** The dialect a recording's header line names (one of `dialects`), or undefined when the line is no header. */
export function recordingDialect(text: string, dialects: readonly Dialect[], checker?: TranscriptChecker): Dialect | undefined {
  if (!text.includes('"recording"')) return undefined;
  try {
    const value = parseBoundedJson(text, checker?.jsonBounds) as { recording?: { dialect?: unknown }; message?: unknown };
    const dialect = value?.recording?.dialect;
    return !("message" in value) && typeof dialect === "string" && dialects.includes(dialect as Dialect) ? (dialect as Dialect) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a line of a transcript or recording, parsing it once: a recorded line that carries
 * unparsed text instead of a message is checked as that text (and reported as not JSON).
 */
function readMessageLine(checker: TranscriptChecker, text: string): ReadLine & { type: "message" } {
  let value: unknown;
  try {
    value = parseBoundedJson(text, checker.jsonBounds);
  } catch {
    // The checker words what is wrong with it (not JSON, or past the bounds on its shape).
    return { type: "message", verdict: checker.line(text), text };
  }
  const time = isObject(value) && typeof value.time === "string" ? value.time : undefined;
  const direction = isObject(value) && (value.direction === "client" || value.direction === "server") ? value.direction : undefined;
  if (isRecordedText(value)) return { type: "message", verdict: checker.line(value.text), direction, text: value.text, time };
  const message = isObject(value) && "message" in value ? value.message : value;
  return { type: "message", verdict: checker.parsedLine(value), direction, message, time };
}

/** A recorded line that carries text a peer sent that was not JSON, instead of a message. */
const isRecordedText = (value: unknown): value is { text: string; direction: Sender } =>
  isObject(value) && !("message" in value) && (value.direction === "client" || value.direction === "server") && typeof value.text === "string";

