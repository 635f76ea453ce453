import { createInterface } from "node:readline";
import type { Readable } from "node:stream";

/**
 * The reading side of a newline-delimited JSON connection on a stream (stdin): each line is handed
 * on as it arrives, and what the handling of each line still owes is tracked, so the connection
 * can wait for every answer once its input ends. Dialect-neutral: a line is text here.
 */
export async function pumpLines(input: Readable, handle: (line: string) => Promise<void>): Promise<Set<Promise<void>>> {
  const open = new Set<Promise<void>>();
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    const handled = handle(line).catch(() => undefined);
    open.add(handled);
    void handled.finally(() => open.delete(handled));
  }
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
