import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { RenderedPiece } from "../generators/pieces.js";
import type { Delivery, MessageChannel } from "./message-channel.js";

const lenientUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/**
 * NDJSON over a child process's stdin/stdout: each piece is written as one line (bytes, then a
 * newline), invalid UTF-8 read as U+FFFD, so a piece with a line break in it is several messages.
 * A line break is what every stdio command's reader (ndjson-lines.ts) takes for one: LF only, one
 * trailing CR dropped (CRLF peers); a lone CR is part of its line, as NDJSON has it.
 */
export class StdioChannel implements MessageChannel {
  private readonly listeners = new Set<(text: string) => void>();
  private readonly unheard: string[] = [];
  closeCode: number | undefined;
  private readonly closedPromise: Promise<number>;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) => {
      this.deliver(line);
    });
    // stdout ending is this channel's close (the process exited or closed it).
    this.closedPromise = new Promise((resolve) =>
      child.stdout.once("close", () => {
        this.closeCode = 1006;
        resolve(1006);
      }),
    );
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

  onMessage(listener: (text: string) => void): () => void {
    this.listeners.add(listener);
    for (const text of this.unheard.splice(0)) listener(text);
    return () => this.listeners.delete(listener);
  }

  /** Messages that arrive while nobody listens wait for the next listener (nothing goes unchecked). */
  private deliver(text: string): void {
    if (this.listeners.size === 0) this.unheard.push(text);
    for (const listener of this.listeners) listener(text);
  }

  closed(timeoutMs: number): Promise<number | undefined> {
    return Promise.race([this.closedPromise, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref())]);
  }

  async close(): Promise<void> {
    // The process owns the pipes; stopping it closes them.
  }
}
