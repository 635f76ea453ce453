import { randomUUID } from "node:crypto";
import type { Event } from "../../generated/ask-v1.0.js";
import type { UserTurnResult } from "../../generated/tau-v18.js";
import { TauResponseError, UpstreamUnavailableError, type TauUpstream } from "../tau/upstream.js";
import type { EventLog } from "./event-log.js";

/**
 * How every dialect delivers a user message to a session: a turn of its own when none runs,
 * otherwise into the running turn (Tau's steer) or after it (Tau's queue). Tau answers
 * `session.submit`, `session.queue` and `session.steer` only when the turn settles, so a delivery
 * is accepted once the session's own event stream shows Tau took the message: its turn starting
 * (submit), or the message in the pending queue (queue, steer) — or the request answered first.
 *
 * The lost-race rule: a submit Tau refuses as `busy` because another client's turn started first
 * goes into that turn instead (as the message would have, sent a moment later), unless the caller
 * gave up meanwhile. Busy for another reason (a mutation such as a compaction, an interrupt
 * settling) is the `busy` outcome, which each dialect words as its own error: retrying at once
 * would only spin.
 */

/** The Tau requests a delivery sends. */
export type TurnRequests = Pick<TauUpstream, "request">;

/** What a delivery reads of its session: its id, its event log (watched for the message taken) and the turn Tau reports running. */
export interface TurnSession {
  readonly sessionId: string;
  readonly log: Pick<EventLog, "subscribe">;
  readonly activeTurnId: string | undefined;
}

/** A request that went out: a submit starting `turnId`, or a steer or queue into or after the running turn `turnId`. */
export interface SentTurnRequest {
  kind: "submit" | "steer" | "queue";
  turnId: string;
  /** Tau's answer, when the turn settles. */
  request: Promise<UserTurnResult>;
}

export interface DeliveryOptions {
  text: string;
  /** The id of the turn a submit starts (the user message's), or of a queued message. */
  turnId: string;
  /** Where the message goes when a turn runs (or started first): into it (default) or after it. */
  whileRunning?: "steer" | "queue";
  /** The caller gave up (a cancelled prompt): a lost race then goes into no other turn. */
  cancelled?: () => boolean;
  /**
   * Called as each request goes out, before any event it brings about: a dialect that tells its
   * own message apart in the stream, or waits for the turn, starts there.
   */
  onSend?: (sent: SentTurnRequest) => void;
  /** A failure after the message was accepted (a queued message rejected by a compaction, say); a lost Tau connection is none: the resync reports how its turn ended. */
  onLateFailure?: (error: unknown) => void;
}

/** How a delivery went; any other refusal is thrown as Tau's (or the upstream's) error. */
export type Delivery =
  | (SentTurnRequest & {
      /** The session ran another turn (from the start, or it won the race): the message went into (steer) or after (queue) it. */
      intoRunning: boolean;
    })
  /** Refused busy with no turn of another client to go into (or the caller gave up): `error` is Tau's refusal. */
  | { kind: "busy"; error: unknown };

/** Submits `text` as a turn of its own, or into (or after) the turn running; resolves once Tau accepted it (see above). */
export async function submitOrSteer(upstream: TurnRequests, session: TurnSession, options: DeliveryOptions): Promise<Delivery> {
  const running = session.activeTurnId;
  if (running !== undefined) return { ...(await deliverWhileRunning(upstream, session, running, options)), intoRunning: true };
  const { turnId, text } = options;
  const submitted = await accepted(
    session,
    { kind: "submit", turnId },
    () => upstream.request("session.submit", { sessionId: session.sessionId, text, historyEntryId: turnId }),
    (event) => event.type === "turn.started" && event.payload.turnId === turnId,
    options,
  );
  if (!("error" in submitted)) return { ...submitted, intoRunning: false };
  if (!isBusy(submitted.error)) throw submitted.error;
  // Lost the race with a turn another client started: into that one instead (checked and sent in one step).
  const other = session.activeTurnId;
  if (other === undefined || options.cancelled?.()) return { kind: "busy", error: submitted.error };
  return { ...(await deliverWhileRunning(upstream, session, other, options)), intoRunning: true };
}

/**
 * A steer into, or a queue after, the running turn `running` (a queued message's id: `turnId`, else
 * a new one); its refusal (busy included: it delivered nothing) is thrown.
 */
export async function deliverWhileRunning(
  upstream: TurnRequests,
  session: TurnSession,
  running: string,
  options: Omit<DeliveryOptions, "turnId"> & { turnId?: string },
): Promise<SentTurnRequest> {
  const { sessionId } = session;
  const { text, turnId = randomUUID() } = options;
  const outcome =
    options.whileRunning === "queue"
      ? await accepted(
          session,
          { kind: "queue", turnId },
          () => upstream.request("session.queue", { sessionId, text, historyEntryId: turnId }),
          (e) =>
            (e.type === "queue.updated" && e.payload.messages.some((m) => m.id === turnId || (m.mode === "queue" && m.text === text))) ||
            (e.type === "turn.started" && e.payload.turnId === turnId),
          options,
        )
      : await accepted(
          session,
          { kind: "steer", turnId: running },
          () => upstream.request("session.steer", { sessionId, text }),
          (e) => (e.type === "queue.updated" && e.payload.messages.some((m) => m.mode === "steer" && m.text === text)) || e.type === "turn.started",
          options,
        );
  if ("error" in outcome) throw outcome.error;
  return outcome;
}

/** Whether Tau refused a request as busy. */
function isBusy(error: unknown): boolean {
  return error instanceof TauResponseError && error.code === "busy";
}

/**
 * Sends one turn request (once the log is being watched) and resolves with it as soon as an event
 * shows Tau took the message — or the request answered successfully first — and with `{ error }`
 * when the request failed before that.
 */
async function accepted(
  session: TurnSession,
  what: Omit<SentTurnRequest, "request">,
  send: () => Promise<UserTurnResult>,
  predicate: (event: Event) => boolean,
  options: Pick<DeliveryOptions, "onSend" | "onLateFailure">,
): Promise<SentTurnRequest | { error: unknown }> {
  const seen = waitForEvent(session.log, predicate);
  const request = send();
  const sent = { ...what, request };
  options.onSend?.(sent);
  const outcome = await Promise.race([
    seen.promise.then(() => undefined),
    request.then(
      () => undefined,
      (error: unknown) => ({ error }),
    ),
  ]);
  seen.cancel();
  if (outcome) return outcome;
  request.catch((error: unknown) => {
    if (!(error instanceof UpstreamUnavailableError)) options.onLateFailure?.(error);
  });
  return sent;
}

/**
 * Resolves once the log receives an event `predicate` picks; `cancel` stops watching. Watching
 * starts before the request goes out, so what it brings about is all still to come.
 */
function waitForEvent(log: Pick<EventLog, "subscribe">, predicate: (event: Event) => boolean) {
  let stop = () => {};
  const promise = new Promise<void>((resolve) => {
    stop = log.subscribe((event) => {
      if (predicate(event)) {
        stop();
        resolve();
      }
    });
  });
  return { promise, cancel: () => stop() };
}
