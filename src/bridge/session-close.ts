import type { Log } from "../shared/log.js";
import { draft } from "./event-draft.js";
import type { HostRouter } from "./hosts/host-router.js";
import type { HostedSessions } from "./hosts/hosted-sessions.js";
import type { SessionRecord } from "./session-registry.js";
import { sessionNotFound } from "./session-error.js";
import { turnsEnded } from "./turn-endings.js";

/**
 * Closing a session for every dialect (Ask's session/close, a Codex ephemeral thread whose last
 * client left), as Ask hosts close a session: what is running stops first, and its subscribers
 * see it stop — the interrupted turn's terminal event, then `session.ended`, then nothing more.
 *
 * 1. The session is marked closed at once, so every later call naming it is -32004 (a send racing
 *    the close cannot start another turn). With replicas sharing a store the close is claimed there
 *    too: a replica opening the session afterwards finds it closed, one that has it open ends it
 *    when `session.ended` reaches its log, and of two closes at once only one goes ahead.
 * 2. Sends already on their way upstream (from any connection) are waited for, at most
 *    `settleTimeoutMs`: a turn one of them starts is running by the next step and stopped with
 *    the rest, rather than left running in Tau unobserved.
 * 3. Messages queued or steered into the running turn are cancelled upstream, so nothing starts
 *    after the interrupt. Should that fail (the Tau host is unreachable), the close is abandoned and
 *    the session stays open: nothing has changed yet.
 * 4. Pending interactions end as cancelled ("session closed").
 * 5. A running turn is interrupted and its terminal event awaited (turn.aborted, or whatever it
 *    settles with), at most `settleTimeoutMs`.
 * 6. `session.ended` is appended and the log closed to anything after it; `ended` lets the
 *    dialect end what follows the session (Ask's subscriptions), the record is dropped and the
 *    session is unobserved upstream.
 *
 * Tau has no delete: the session stays on the host, idle, with its history.
 */

export const CLOSE_SETTLE_TIMEOUT_MS = 10_000;

export interface CloseServices {
  readonly upstream: Pick<HostRouter, "request">;
  readonly sessions: HostedSessions;
  /** What else ends with the session once `session.ended` is delivered. */
  readonly ended?: (sessionId: string) => void;
}

export async function closeSession(services: CloseServices, record: SessionRecord, options: { settleTimeoutMs?: number; log?: Log } = {}): Promise<void> {
  const { upstream, sessions } = services;
  const { sessionId, hub } = record;
  if (!sessions.beginClose(sessionId)) throw sessionNotFound(sessionId);
  // Replicas sharing a store: another one closing it first makes this close find it gone.
  if (!(await sessions.claimClose(sessionId))) throw sessionNotFound(sessionId);
  const settleTimeoutMs = options.settleTimeoutMs ?? CLOSE_SETTLE_TIMEOUT_MS;

  if (!(await record.sends.settled(settleTimeoutMs))) {
    options.log?.("warn", "closing a session while a send to it is still unanswered upstream; a turn it starts may run on in Tau", { sessionId });
  }
  if (hub.running) {
    try {
      await upstream.request("session.cancelPendingMessages", { sessionId });
    } catch (error) {
      await sessions.abandonClose(sessionId).catch((abandonError: unknown) => {
        options.log?.("warn", "a failed close could not be undone in the shared store; other replicas see the session closed", { sessionId, error: String(abandonError) });
      });
      throw error;
    }
  }
  record.interactions.cancelAll("session closed");

  const turns = hub.runningTurnIds;
  if (turns.length > 0) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, settleTimeoutMs);
      timer.unref?.();
    });
    const settled = turnsEnded(hub.log, turns, deadline);
    try {
      await upstream.request("session.interrupt", { sessionId });
    } catch (error) {
      options.log?.("warn", "session.interrupt failed while closing", { sessionId, error: String(error) });
    }
    const missing = await settled;
    clearTimeout(timer);
    if (missing.length > 0) {
      options.log?.("warn", "closing a session whose turn did not settle in time; its end is not reported", { sessionId, turnIds: missing });
    }
  }

  hub.end(draft("session.ended", { sessionId, reason: "closed" }));
  // A shared log gives session.ended its seq in the store: subscribers get it once it is back here.
  if (hub.sharedLog) await hub.appended();
  services.ended?.(sessionId);
  sessions.forget(sessionId);
  await hub.detach();
}
