import { createInterface } from "node:readline";
import type { Readable } from "node:stream";

/** A connection that takes one message of text at a time (a JSON-RPC connection of any dialect). */
export interface LineConnection {
  receive(text: string): Promise<void>;
  close(): void;
}

/**
 * Newline-delimited JSON on a pair of streams (stdin/stdout for clients that spawn the gateway):
 * feeds each input line to the connection, and resolves once input has ended — or `stop` aborted,
 * e.g. on SIGTERM — and every message received has been handled (its answer written), then closes
 * the connection.
 */
export async function serveNdjsonLines(connection: LineConnection, input: Readable, stop?: AbortSignal): Promise<void> {
  const pending = new Set<Promise<void>>();
  // A destroyed stdin does not always end the line reader; closing the reader itself does.
  for await (const line of createInterface({ input, crlfDelay: Infinity, signal: stop })) {
    const handled = connection.receive(line);
    pending.add(handled);
    void handled.finally(() => pending.delete(handled));
  }
  await Promise.allSettled([...pending]);
  connection.close();
}
