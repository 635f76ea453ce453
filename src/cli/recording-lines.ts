import type { Dialect } from "../registry/index.js";
import { isObject } from "../shared/unknown-values.js";
import type { LineVerdict, TranscriptChecker } from "../validation/transcript.js";

/**
 * The two kinds of line a recording (`serve --record`, `--record FILE`) holds besides messages:
 * its header, which names the dialect of the whole file, and text a peer sent that was not JSON,
 * kept as it came under `text`.
 */

/** The dialect a recording's header line names (one of `dialects`), or undefined when the line is no header. */
export function recordingDialect(text: string, dialects: readonly Dialect[]): Dialect | undefined {
  if (!text.includes('"recording"')) return undefined;
  try {
    const value = JSON.parse(text) as { recording?: { dialect?: unknown }; message?: unknown };
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
export function checkRecordingLine(checker: TranscriptChecker, text: string): LineVerdict {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The checker words what is wrong with it.
    return checker.line(text);
  }
  return isRecordedText(value) ? checker.line(value.text) : checker.parsedLine(value);
}

/** A recorded line that carries text a peer sent that was not JSON, instead of a message. */
const isRecordedText = (value: unknown): value is { text: string } =>
  isObject(value) && !("message" in value) && (value.direction === "client" || value.direction === "server") && typeof value.text === "string";
