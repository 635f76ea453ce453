/**
 * Newline-delimited framing of a byte stream, with a bound on a line's length: a peer that never
 * sends a newline must not make us hold its bytes without limit. A line over the bound is skipped
 * up to its newline (reported once, as soon as it is known to be too long) and the next line is
 * read normally, so one oversized message does not cost the peer its connection.
 *
 * Lines are split on bytes and decoded whole, so a multi-byte character cut by a chunk boundary
 * survives; invalid UTF-8 decodes to U+FFFD, as a text stream would. A trailing "\r" is dropped
 * (CRLF peers) and blank lines are skipped.
 */

/** In place of a line that was longer than the bound. */
export const OVERSIZED_LINE = Symbol("oversized line");

export type LineFrame = string | typeof OVERSIZED_LINE;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export class LineSplitter {
  /** Bytes of the line begun in earlier chunks. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** Discarding the rest of an oversized line, up to its newline. */
  private skipping = false;

  constructor(private readonly maxLineBytes: number) {}

  /** The lines a chunk completes, in order. */
  push(chunk: Buffer): LineFrame[] {
    const frames: LineFrame[] = [];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (this.skipping) this.skipping = false;
      else this.emit(frames, this.take(chunk.subarray(start, end)));
      start = end + 1;
    }
    if (start < chunk.length && !this.skipping) {
      const rest = chunk.subarray(start);
      // A CR at the end may be the first half of the line's CRLF, which does not count against the bound.
      const trailingCr = rest[rest.length - 1] === CARRIAGE_RETURN ? 1 : 0;
      if (this.partialBytes + rest.length - trailingCr > this.maxLineBytes) {
        this.partial = [];
        this.partialBytes = 0;
        this.skipping = true;
        frames.push(OVERSIZED_LINE);
      } else {
        // A copy: the reader may reuse the chunk's memory.
        this.partial.push(Buffer.from(rest));
        this.partialBytes += rest.length;
      }
    }
    return frames;
  }

  /** The last line, when the input ended without a newline after it. */
  end(): LineFrame[] {
    const frames: LineFrame[] = [];
    if (!this.skipping && this.partialBytes > 0) this.emit(frames, this.take(Buffer.alloc(0)));
    this.partial = [];
    this.partialBytes = 0;
    this.skipping = false;
    return frames;
  }

  /** The line ending with `tail`: what earlier chunks held of it, then `tail`. */
  private take(tail: Buffer): Buffer {
    if (this.partialBytes === 0) return tail;
    const line = Buffer.concat([...this.partial, tail]);
    this.partial = [];
    this.partialBytes = 0;
    return line;
  }

  private emit(frames: LineFrame[], line: Buffer): void {
    const length = line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.length - 1 : line.length;
    if (length > this.maxLineBytes) return void frames.push(OVERSIZED_LINE);
    const text = line.toString("utf8", 0, length);
    if (text.trim() !== "") frames.push(text);
  }
}
