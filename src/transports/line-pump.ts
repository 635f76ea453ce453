import { createInterface } from "node:readline";
import type { Readable } from "node:stream";

/**
 * The reading side of a newline-delimited JSON connection on a stream (stdin): each line is handed
 * on as it arrives, and what the handling of each line still owes is tracked, so the connection
 * can wait for every answer once its input ends (or `stop` aborts). Dialect-neutral: a line is
 * text here.
 */
export async function pumpLines(input: Readable, handle: (line: string) => Promise<void>, stop?: AbortSignal): Promise<Set<Promise<void>>> {
  const open = new Set<Promise<void>>();
  const lines = createInterface({ input, crlfDelay: Infinity });
  // Stopping (a signal) ends the reading as the end of input would; destroying the stream does not end readline.
  const onStop = () => lines.close();
  if (stop?.aborted) onStop();
  stop?.addEventListener("abort", onStop, { once: true });
  for await (const line of lines) {
    const handled = handle(line).catch(() => undefined);
    open.add(handled);
    void handled.finally(() => open.delete(handled));
  }
  stop?.removeEventListener("abort", onStop);
  return open;
}

/** Waits until every promise has settled or `timeoutMs` passed; true when all settled in time. */
export async function settledWithin(promises: Iterable<Promise<unknown>>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  try {
    return await Promise.race([Promise.allSettled([...promises]).then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
