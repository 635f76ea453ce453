import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/** A line break as readline reads them with `crlfDelay: Infinity`: LF, CRLF (one break) or a lone CR. */
const LINE_BREAK = /\r\n|\n|\r/;
const CR = 13;

/**
 * The lines of a stream (UTF-8, or strings), one batch per chunk read: the lines `readline` would
 * give, without its per-line event and promise, which cost more than checking a line of a
 * transcript. A line cut by a chunk's end is completed by the next chunk; a CR at a chunk's end
 * waits for the next chunk, where it may be a CRLF. No empty line after a final line break.
 */
export async function* lineBatches(input: Readable): AsyncGenerator<string[]> {
  const decoder = new StringDecoder("utf8");
  let rest = "";
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const text = rest + (typeof chunk === "string" ? chunk : decoder.write(chunk));
    const settled = text.charCodeAt(text.length - 1) === CR ? text.length - 2 : text.length - 1;
    const lastBreak = settled < 0 ? -1 : Math.max(text.lastIndexOf("\n", settled), text.lastIndexOf("\r", settled));
    if (lastBreak < 0) {
      rest = text;
      continue;
    }
    rest = text.slice(lastBreak + 1);
    const lines = text.slice(0, lastBreak + 1).split(LINE_BREAK);
    lines.pop();
    yield lines;
  }
  const last = rest + decoder.end();
  if (last === "") return;
  const lines = last.split(LINE_BREAK);
  if (lines[lines.length - 1] === "") lines.pop();
  yield lines;
}
