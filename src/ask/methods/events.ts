import type { Event, SessionEventsParams, SessionEventsResult, SessionSubscribeParams, SessionSubscribeResult } from "../../../generated/ask-v1.0.js";
import { askError } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import { EventRetentionError, type EventLog } from "../../bridge/event-log.js";
import { askJoiningClient } from "../../bridge/interactions/index.js";
import { PeerReverseRequester } from "../reverse-requests.js";

export async function subscribe({ services, peer }: MethodContext, params: SessionSubscribeParams): Promise<SessionSubscribeResult> {
  // The log is all a subscription reads: another replica's hub need not observe the session for it.
  const record = await services.sessions.access(params.sessionId, peer.tenant, READS_THE_LOG);
  const deliveryKind = params.deliveryKind ?? "replay";
  const log = record.hub.log;
  // A shared log may hold more than this replica's copy heard so far: the cursor is judged against the store.
  await record.hub.catchUp();
  // live: only what happens from now on; every other kind replays after afterSeq.
  let cursor = deliveryKind === "live" ? log.newestSeq : fromSeq(params.afterSeq);
  if (record.hub.sharedLog && cursor > log.newestSeq) {
    // The cursor is beyond anything the shared log holds: its history was lost and it began again
    // (a new epoch, whose first event is session.reset). Replaying the new epoch says so explicitly.
    cursor = 0;
    services.sessions.resumes.reset += 1;
  }
  if (record.hub.sharedLog && cursor > 0 && cursor < log.oldestSeq - 1 && log.read(log.oldestSeq - 1, 1).events[0]?.type === "session.reset") {
    // The cursor is from before a new epoch (the shared log lost its history and began again above
    // every seq it had issued, with session.reset): replaying from that reset says so explicitly.
    cursor = log.oldestSeq - 1;
    services.sessions.resumes.reset += 1;
  }
  let backlog: Event[];
  try {
    backlog = readRetained(log, cursor).events;
  } catch (error) {
    // History the replay needs was trimmed: the client is told (-32602 with the oldest seq).
    services.sessions.resumes.reset += 1;
    throw error;
  }
  if (cursor > 0 && deliveryKind !== "live") services.sessions.resumes.recovered += 1;
  let snapshot: SessionSubscribeResult["snapshot"];
  if (params.includeSnapshot) {
    // The missed events travel once, in the result; the cursor moves past them so the live
    // stream does not repeat them (the Ask host bug this avoids: every event arrived twice).
    snapshot = backlog;
    cursor = backlog.length ? backlog[backlog.length - 1]!.seq : cursor;
    backlog = [];
  }
  const { subscriptions } = services;
  const joining = !subscriptions.isSubscribed(peer, record.sessionId);
  subscriptions.subscribe(peer, record.sessionId, log, cursor, deliveryKind, backlog);
  // Approvals and questions pending now were put to the clients there were: one that takes reverse requests is asked at once.
  if (joining && peer.capabilities.reverseRequests) {
    askJoiningClient(record, new PeerReverseRequester((sessionId) => subscriptions.subscribers(sessionId).filter((p) => p === peer), services.core.roles));
  }
  return { subscription: { sessionId: record.sessionId, deliveryKind }, ...(snapshot ? { snapshot } : {}) };
}

/**
 * session/events, by the Ask host's rules: limit 0 means no limit; hasMore says whether events
 * remain after the page only when a positive limit was given (false for limit 0, null without one).
 */
export async function events({ services, peer }: MethodContext, params: SessionEventsParams): Promise<SessionEventsResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant, READS_THE_LOG);
  const limit = params.limit === 0 ? undefined : params.limit;
  await record.hub.catchUp();
  const log = record.hub.log;
  const afterSeq = fromSeq(params.afterSeq);
  if (record.hub.sharedLog && afterSeq > log.newestSeq) {
    throw askError(
      "invalid_params",
      `invalid params: afterSeq: events after seq ${afterSeq} do not exist: the session's history was lost and its log began again at seq 1 (newest seq ${log.newestSeq}); read from 0`,
      { oldestSeq: log.oldestSeq, newestSeq: log.newestSeq },
    );
  }
  const read = readRetained(log, afterSeq, limit);
  const hasMore = params.limit === undefined ? null : limit === undefined ? false : read.hasMore;
  return { sessionId: record.sessionId, events: read.events, hasMore };
}

const READS_THE_LOG = { follow: false } as const;

/** afterSeq -1 (and absent) read from the start, as 0 does. */
const fromSeq = (afterSeq: number | undefined) => Math.max(0, afterSeq ?? 0);

/** Reads the log, turning "already dropped" into a client error that states the oldest retained seq. */
function readRetained(log: EventLog, afterSeq: number, limit?: number) {
  try {
    return log.read(afterSeq, limit);
  } catch (err) {
    if (err instanceof EventRetentionError) throw askError("invalid_params", `invalid params: afterSeq: ${err.message}`, { oldestSeq: err.oldestSeq });
    throw err;
  }
}
