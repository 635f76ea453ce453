/** Thrown by interruptible waits when their signal is aborted. */
export class AbortedError extends Error {
  constructor() {
    super("aborted");
    this.name = "AbortedError";
  }
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AbortedError();
}

/**
 * Waits `ms` milliseconds, or rejects with AbortedError as soon as `signal` aborts. A zero wait
 * still yields to the event loop, so incoming requests (an interrupt, a steer) are handled
 * between streamed chunks even without pacing.
 */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new AbortedError());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clear();
      reject(new AbortedError());
    };
    const done = () => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    };
    const timer = ms > 0 ? setTimeout(done, ms) : undefined;
    const immediate = ms > 0 ? undefined : setImmediate(done);
    const clear = () => {
      if (timer) clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
