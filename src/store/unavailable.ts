/**
 * Errors of store commands that failed for want of the server (timed out, connection closed,
 * retries spent), and the command each came from. Process-wide and free of any store library, so
 * whoever turns a failure into a client's answer can tell it apart without holding the store.
 */
const failures = new WeakMap<Error, string>();

/** Notes that `error` is the failure of store command `operation` for want of the server. */
export function recordStoreUnavailable(error: Error, operation: string): void {
  failures.set(error, operation);
}

/**
 * The store command whose failure `error` is (or caused, through `cause`) when it failed because
 * the store could not be reached in time; undefined for any other error.
 */
export function storeUnavailableOperation(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const operation = failures.get(e);
    if (operation !== undefined) return operation;
  }
  return undefined;
}

/** What a client is told when its request needed the store and the store could not be reached (never the store library's words). */
export const STORE_UNAVAILABLE_MESSAGE = "store unavailable: the gateway's shared store cannot be reached right now; retry shortly";
