/** Resolves with "stopped" once `signal` aborts (never, without one): for racing a stream's end against a stop request. */
export function untilAborted(signal: AbortSignal | undefined): Promise<"stopped"> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) return resolve("stopped");
    signal.addEventListener("abort", () => resolve("stopped"), { once: true });
  });
}
