import type { Event } from "../../generated/ask-v1.0.js";
import type { EventLog } from "./event-log.js";

/**
 * Tau answers `session.submit`, `session.queue` and `session.steer` only when the turn settles, so a
 * dialect learns that Tau accepted a user message from the session's own event stream: the turn
 * starting (submit), or the message appearing in the pending queue (queue, steer).
 */

/** Resolves once the log holds (after `afterSeq`) or receives an event `predicate` picks; `cancel` stops watching. */
export function waitForEvent(log: EventLog, afterSeq: number, predicate: (event: Event) => boolean) {
  let stop = () => {};
  const promise = new Promise<void>((resolve) => {
    if (log.read(afterSeq).events.some(predicate)) return resolve();
    stop = log.subscribe((event) => {
      if (predicate(event)) {
        stop();
        resolve();
      }
    });
  });
  return { promise, cancel: () => stop() };
}

/**
 * Starts a turn request (`send`, called once the log is being watched) and resolves with
 * "accepted" as soon as an event shows Tau took the message — or the request answered successfully
 * first — and with `{ error }` when the request failed before that. An accepted request may still
 * fail later (a queued message rejected by a compaction, say): `request` is that outcome.
 */
export async function turnAcceptance<T>(
  log: EventLog,
  send: () => Promise<T>,
  accepted: (event: Event) => boolean,
): Promise<{ outcome: "accepted" | { error: unknown }; request: Promise<T> }> {
  const seen = waitForEvent(log, log.newestSeq, accepted);
  const request = send();
  const outcome = await Promise.race([
    seen.promise.then(() => "accepted" as const),
    request.then(
      () => "accepted" as const,
      (error: unknown) => ({ error }),
    ),
  ]);
  seen.cancel();
  return { outcome, request };
}
