import type { SessionEventsParams, SessionEventsResult, SessionSubscribeParams, SessionSubscribeResult } from "../../../generated/ask-v1.0.js";
import { AskError } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import { EventRetentionError, type EventLog } from "../event-log.js";

export async function subscribe({ services, peer }: MethodContext, params: SessionSubscribeParams): Promise<SessionSubscribeResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  const deliveryKind = params.deliveryKind ?? "replay";
  const log = record.hub.log;
  // live: only what happens from now on; every other kind replays after afterSeq.
  let cursor = deliveryKind === "live" ? log.newestSeq : fromSeq(params.afterSeq);
  let backlog = readRetained(log, cursor).events;
  let snapshot: SessionSubscribeResult["snapshot"];
  if (params.includeSnapshot) {
    // The missed events travel once, in the result; the cursor moves past them so the live
    // stream does not repeat them (the Ask host bug this avoids: every event arrived twice).
    snapshot = backlog;
    cursor = backlog.length ? backlog[backlog.length - 1]!.seq : cursor;
    backlog = [];
  }
  services.subscriptions.subscribe(peer, record.sessionId, log, cursor, deliveryKind, backlog);
  return { subscription: { sessionId: record.sessionId, deliveryKind }, ...(snapshot ? { snapshot } : {}) };
}

/**
 * session/events, by the Ask host's rules: limit 0 means no limit; hasMore says whether events
 * remain after the page only when a positive limit was given (false for limit 0, null without one).
 */
export async function events({ services, peer }: MethodContext, params: SessionEventsParams): Promise<SessionEventsResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  const limit = params.limit === 0 ? undefined : params.limit;
  const read = readRetained(record.hub.log, fromSeq(params.afterSeq), limit);
  const hasMore = params.limit === undefined ? null : limit === undefined ? false : read.hasMore;
  return { sessionId: record.sessionId, events: read.events, hasMore };
}

/** afterSeq -1 (and absent) read from the start, as 0 does. */
const fromSeq = (afterSeq: number | undefined) => Math.max(0, afterSeq ?? 0);

/** Reads the log, turning "already dropped" into a client error that states the oldest retained seq. */
function readRetained(log: EventLog, afterSeq: number, limit?: number) {
  try {
    return log.read(afterSeq, limit);
  } catch (err) {
    if (err instanceof EventRetentionError) throw AskError.of("invalid_params", `invalid params: afterSeq: ${err.message}`, { oldestSeq: err.oldestSeq });
    throw err;
  }
}
