import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { RenderedPiece } from "../generators/pieces.js";
import type { Delivery, MessageChannel } from "./message-channel.js";
import { ReceivingChannel } from "./receiving-channel.js";

const lenientUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/**
 * NDJSON over a child process's stdin/stdout: each piece is written as one line (bytes, then a
 * newline), invalid UTF-8 read as U+FFFD, so a piece with a line break in it is several messages.
 * A line break is what every stdio command's reader (ndjson-lines.ts) takes for one: LF only, one
 * trailing CR dropped (CRLF peers); a lone CR is part of its line, as NDJSON has it.
 */
export class StdioChannel extends ReceivingChannel implements MessageChannel {
  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    super();
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) => {
      this.deliver(line);
    });
    // stdout ending is this channel's close (the process exited or closed it).
    child.stdout.once("close", () => this.ended(1006));
    child.stdin.on("error", () => undefined);
  }

  delivery(pieces: readonly RenderedPiece[]): Delivery {
    const text = lenientUtf8.decode(Buffer.concat(pieces.flatMap((p) => [p.data, Buffer.from("\n")])));
    const units = text.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
    units.pop(); // after the last newline
    return { units, count: pieces.length };
  }

  send(pieces: readonly RenderedPiece[]): void {
    for (const piece of pieces) this.child.stdin.write(Buffer.concat([piece.data, Buffer.from("\n")]));
  }

  sendText(text: string): void {
    this.child.stdin.write(`${text}\n`);
  }

  async close(): Promise<void> {
    // The process owns the pipes; stopping it closes them.
  }
}
