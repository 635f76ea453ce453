import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import type { Dialect } from "../registry/index.js";
import type { JsonBounds } from "../shared/json-bounds.js";
import { TranscriptReader } from "../validation/recording-lines.js";
import type { LineVerdict } from "../validation/transcript.js";
import { lineBatches } from "./line-batches.js";

/**
 * One transcript checked as `tau-gateway validate` checks it, in the command's thread or in a
 * worker's (validate-worker.ts): ids are correlated within one file, so a file is checked whole, by
 * one reader, in order.
 */

/**
 * validate runs on the user's own files, holding no one else's event loop: a line of any number
 * of values is checked (a Tau snapshot can hold many), and only nesting deep enough to overflow
 * the stack of the schema check is refused, as a verdict on that line.
 */
export const OFFLINE_JSON_BOUNDS: JsonBounds = { maxDepth: 1_000, maxValues: Number.POSITIVE_INFINITY, maxMembers: Number.POSITIVE_INFINITY };

export interface FileSettings {
  dialect?: Dialect;
  tauVersion?: number;
}

/** A message line's number and verdict (blank lines and a recording's header are none). */
export type CheckedLine = readonly [lineNo: number, verdict: LineVerdict];

/** How reading a file failed: it could not be opened, or it broke off while being read. */
export class FileReadError extends Error {
  constructor(
    readonly stage: "open" | "read",
    override readonly cause: unknown,
  ) {
    super(stage);
  }
}

/**
 * Checks every line of `input`, handing the message lines' verdicts to `onLines` a chunk read at a
 * time; `stop()` true ends the reading early. Throws FileReadError(read) when the stream fails.
 */
export async function checkTranscript(input: Readable, settings: FileSettings, onLines: (lines: CheckedLine[]) => void, stop: () => boolean = () => false): Promise<void> {
  const reader = new TranscriptReader({ dialect: settings.dialect, tauVersion: settings.tauVersion, jsonBounds: OFFLINE_JSON_BOUNDS });
  let lineNo = 0;
  try {
    for await (const lines of lineBatches(input)) {
      if (stop()) {
        input.destroy();
        return;
      }
      const checked: CheckedLine[] = [];
      for (const text of lines) {
        lineNo++;
        const read = reader.read(text);
        if (read.type === "message") checked.push([lineNo, read.verdict]);
      }
      onLines(checked);
    }
  } catch (err) {
    throw new FileReadError("read", err);
  }
}

/** Opens a file, surfacing "not found" and friends before any output is written. */
export function openTranscript(path: string): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const stream = createReadStream(path);
    stream.once("open", () => resolve(stream));
    stream.once("error", (err) => reject(new FileReadError("open", err)));
  });
}
