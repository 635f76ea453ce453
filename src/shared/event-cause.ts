import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Which session happening a message to a client came from, for the inspector's cross-dialect
 * timeline: an event of the session's log (every dialect's subscriber turns it into its own words
 * while the log hands it out), or an interaction whose clients are being asked (a reverse request).
 *
 * The cause travels without being passed by hand: the event log runs its listeners, and the
 * interactions their asking, inside `withEventCause`, and what those start (synchronously or
 * through promises) runs in the same context. A connection's outbound sequencer takes the cause
 * in force when a message is queued and declares it while writing the message (`writeWithCause`),
 * so a tap at the socket reads it (`causeOfWrite`) even when the write happens later.
 *
 * Off unless something reads the causes (`serve --inspector` turns it on): then nothing is tracked
 * and the gateway runs exactly as without it.
 */
export interface EventCause {
  sessionId: string;
  /** The session event (its seq in the session's log) the message is that event in the client's dialect. */
  seq?: number;
  type?: string;
  /** The interaction the message asks a client about. */
  interactionId?: string;
}

const ambient = new AsyncLocalStorage<EventCause>();
let tracking = false;
/** The cause of the message being written right now; `none` while one without a cause is written. */
let writing: { cause: EventCause | undefined } | undefined;

/** From now on causes are tracked (for the life of the process: taps come and go, tracking stays cheap). */
export function trackEventCauses(): void {
  tracking = true;
}

/** Runs `fn` with `cause` as the cause of whatever it sends to clients (just runs it while causes are not tracked). */
export function withEventCause<T>(cause: EventCause, fn: () => T): T {
  return tracking ? ambient.run(cause, fn) : fn();
}

/** The cause in force here (undefined outside any, or while causes are not tracked). */
export function currentEventCause(): EventCause | undefined {
  return tracking ? ambient.getStore() : undefined;
}

/** Writes a message with its cause declared (undefined: it has none) for the tap that sees the write. */
export function writeWithCause(cause: EventCause | undefined, write: () => void): void {
  if (!tracking) return write();
  const before = writing;
  writing = { cause };
  try {
    write();
  } finally {
    writing = before;
  }
}

/**
 * The cause of the message a tap sees being written: the one its writer declared, or else the
 * one in force (a transport that writes without a sequencer, e.g. an event stream).
 */
export function causeOfWrite(): EventCause | undefined {
  if (!tracking) return undefined;
  return writing ? writing.cause : ambient.getStore();
}
