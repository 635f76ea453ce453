import type { MessageChannel } from "./message-channel.js";

/**
 * Resolves with the first message received from now on that matches `predicate` (parsed JSON;
 * array messages are searched element by element); rejects after `timeoutMs` or when the
 * connection closes first.
 */
export function nextMessage<T = any>(channel: MessageChannel, predicate: (message: any) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
    const stop = channel.onMessage((text) => {
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return;
      }
      const found = (Array.isArray(message) ? message : [message]).find(predicate);
      if (found !== undefined) finish(undefined, found as T);
    });
    void channel.closed(timeoutMs).then((code) => {
      if (code !== undefined) finish(new Error(`connection closed (${code}) while waiting for ${what}`));
    });
    let settled = false;
    function finish(error: Error | undefined, value?: T) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop();
      if (error) reject(error);
      else resolve(value as T);
    }
  });
}
