import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/** A line break as readline reads them with `crlfDelay: Infinity`: LF, CRLF (one break) or a lone CR. */
const LINE_BREAK = /\r\n|\n|\r/;

/**
 * The lines of a stream (UTF-8, or strings), one batch per chunk read: the lines `readline` would
 * give, without its per-line event and promise, which cost more than checking a line of a
 * transcript. A chunk's text is split where it is, not copied first: its lines are slices of it,
 * and a line cut by the chunk's end is completed by the next chunk. A CR ending a chunk is a line
 * break, and an LF starting the next one is then its CRLF's, not another. No empty line after a
 * final line break.
 */
export async function* lineBatches(input: Readable): AsyncGenerator<string[]> {
  const decoder = new StringDecoder("utf8");
  let rest = "";
  let afterCR = false;
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    let text = typeof chunk === "string" ? chunk : decoder.write(chunk);
    if (text === "") continue;
    if (afterCR && text.charCodeAt(0) === 10) text = text.slice(1);
    afterCR = text.charCodeAt(text.length - 1) === 13;
    // Splitting on one character is V8's fast path; CRs are rare in transcripts.
    const lines = text.includes("\r") ? text.split(LINE_BREAK) : text.split("\n");
    lines[0] = rest + lines[0];
    rest = lines.pop()!;
    if (lines.length) yield lines;
  }
  const last = rest + decoder.end();
  if (last !== "") yield [last];
}
