// One session across dialects, with no DOM: the session's events in seq order, each with the frames
// it became on every connection (a frame's `cause` names the session event or the interaction it
// was sent for), and the session's approvals and questions: who was asked, who answered what, when.
import { messageOf } from "./rows.js";

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The session event a frame is part of: the cause the gateway attached to it, or else, for an Ask
 * `session/event` (a replay, read from the log for a subscribe or `session/events`), the event it
 * carries. Undefined for anything else.
 * @returns {{ sessionId: string, seq?: number, type?: string, interactionId?: string } | undefined}
 */
export function frameEventKey(frame) {
  if (frame.cause && typeof frame.cause.sessionId === "string") return frame.cause;
  if (frame.dialect !== "ask" || frame.direction !== "server" || frame.method !== "session/event") return undefined;
  const message = messageOf(frame);
  const params = isObject(message) && isObject(message.params) ? message.params : undefined;
  const event = params && isObject(params.event) ? params.event : undefined;
  if (!event || typeof params.sessionId !== "string" || typeof event.seq !== "number") return undefined;
  return { sessionId: params.sessionId, seq: event.seq, type: typeof event.type === "string" ? event.type : undefined };
}

/**
 * The Tau delta a frame to a `/tau` client is (its session and toRevision), or undefined. Such a
 * client observes the session on its own upstream connection; the gateway says which deltas each
 * event was translated from, and the timeline puts the delta under those events.
 */
export function tauDeltaOf(frame) {
  if (frame.dialect !== "tau" || frame.direction !== "server" || frame.method !== "session.delta") return undefined;
  const message = messageOf(frame);
  if (!isObject(message) || typeof message.sessionId !== "string" || typeof message.toRevision !== "number") return undefined;
  return { sessionId: message.sessionId, revision: message.toRevision };
}

/** The sessions frames were sent for, in the order first seen. */
export function sessionIdsOf(frames) {
  const ids = new Set();
  for (const frame of frames) {
    const key = frameEventKey(frame);
    if (key) ids.add(key.sessionId);
  }
  return [...ids];
}

/** Interaction ids of `sessionId` by the seq of the event that announced each (approval.required, input.requested). */
function announcements(events) {
  const bySeq = new Map();
  for (const event of events) {
    if ((event.type === "approval.required" || event.type === "input.requested") && isObject(event.payload) && typeof event.payload.id === "string") {
      bySeq.set(event.seq, event.payload.id);
    }
  }
  return bySeq;
}

/**
 * The timeline of `sessionId`: one row per event (from `events`, the session's log as the gateway
 * keeps it, and from frames naming an event not fetched yet), oldest first, each with the frames it
 * became, in the order they were sent. Frames sent to ask clients about an interaction (and to
 * withdraw the question) go under the event that announced it; a Tau delta sent to a `/tau`
 * client goes under each event translated from it (an event's `tau`: the deltas' first and last
 * toRevision).
 * @param {string} sessionId
 * @param {{ seq: number, type: string, payload?: unknown, preview?: string, tau?: { from: number, to: number } }[]} events
 * @param {any[]} frames in the order they were sent
 * @returns {{ seq: number, type: string, payload?: unknown, preview?: string, frames: any[] }[]}
 */
export function buildTimeline(sessionId, events, frames) {
  const rows = new Map();
  for (const event of events) rows.set(event.seq, { ...event, frames: [] });
  const announcedBy = new Map([...announcements(events)].map(([seq, id]) => [id, seq]));
  const fromDeltas = events.filter((event) => event.tau);
  for (const frame of frames) {
    const delta = tauDeltaOf(frame);
    if (delta) {
      if (delta.sessionId !== sessionId) continue;
      for (const event of fromDeltas) if (event.tau.from <= delta.revision && delta.revision <= event.tau.to) rows.get(event.seq).frames.push(frame);
      continue;
    }
    const key = frameEventKey(frame);
    if (!key || key.sessionId !== sessionId) continue;
    const seq = key.seq ?? (key.interactionId !== undefined ? announcedBy.get(key.interactionId) : undefined);
    if (seq === undefined) continue;
    let row = rows.get(seq);
    if (!row) rows.set(seq, (row = { seq, type: key.type ?? "?", frames: [] }));
    row.frames.push(frame);
  }
  return [...rows.values()].sort((a, b) => a.seq - b.seq);
}

const ANSWER_METHODS = new Set(["interaction/approve", "interaction/reject", "interaction/respond"]);
/** How a dialect tells a client a request of the gateway's no longer needs an answer (Codex, ACP). */
const WITHDRAWALS = new Set(["serverRequest/resolved", "$/cancel_request"]);
const ALL_METHODS = new Set(["interaction/approve-all", "interaction/reject-all"]);
/** Ask's answers to the session's pending plans (every one of them). */
const PLAN_METHODS = new Set(["plan/approve", "plan/reject"]);
/** The events that announce an interaction, and those that end one, with the kind they are of. */
const ANNOUNCING = { "approval.required": "approval", "input.requested": "user_input", "plan.proposed": "plan" };
const ENDING = { "approval.updated": "approval", "input.resolved": "user_input", "plan.approved": "plan", "plan.rejected": "plan" };

/** What an answer said, in a few words: a decision, an answer text, an error. */
export function answerWords(frame) {
  const message = messageOf(frame);
  if (!isObject(message)) return frame.raw ?? "";
  if (isObject(message.error)) return `error: ${message.error.message ?? message.error.code}`;
  if (typeof message.method === "string") {
    const params = isObject(message.params) ? message.params : {};
    const detail = params.scope ?? params.response ?? params.feedback;
    return `${message.method}${detail === undefined ? "" : ` ${JSON.stringify(detail)}`}`;
  }
  const result = message.result;
  if (isObject(result)) {
    if (result.decision !== undefined) return `decision ${JSON.stringify(result.decision)}`;
    if (isObject(result.outcome)) return `outcome ${JSON.stringify(result.outcome)}`;
  }
  return JSON.stringify(result ?? null);
}

/** What an operator's answer from the page said. */
export function decisionWords(decision) {
  // One vote of several (a policy's count) is shown as that, not as the decision.
  const vote = decision.vote ? ` (a vote${decision.vote.approvals === undefined ? "" : `, ${decision.vote.approvals} of ${decision.vote.needed}`}; not yet decided)` : "";
  // A plan's approval has no scope.
  if (decision.action === "approve") return (decision.scope === undefined ? "approved" : `approved ${decision.scope === "session" ? "for the session" : "once"}`) + vote;
  if (decision.action === "reject") return `rejected${decision.feedback ? `: ${decision.feedback}` : ""}${vote}`;
  if (decision.action === "respond") return `answered ${JSON.stringify(decision.response)}`;
  return `declined${decision.reason ? `: ${decision.reason}` : ""}`;
}

/**
 * The approvals, questions and plans of `sessionId`, oldest first: what each asks, whether it is still
 * pending (then the operator may answer it), which connections were asked (the requests sent for
 * it, and the notices withdrawing them once it was settled: Codex's serverRequest/resolved, ACP's
 * $/cancel_request), who answered what and when (a client's
 * answer to its request, an Ask client's interaction/* or plan/* call, an operator on this page), and how it
 * ended.
 * @param {string} sessionId
 * @param {{ seq: number, type: string, payload?: any }[]} events
 * @param {{ id: string, kind: string, payload?: any }[]} pending the gateway's pending list
 * @param {any[]} frames in the order they were sent
 * @param {{ sessionId: string, interactionId: string, action: string, by: string, at: string }[]} decisions
 */
export function interactionsOf(sessionId, events, pending, frames, decisions) {
  const byId = new Map();
  const entry = (id, kind) => {
    let item = byId.get(id);
    if (!item) byId.set(id, (item = { id, kind, payload: undefined, pending: false, asked: [], withdrawn: [], answers: [], outcome: undefined }));
    return item;
  };
  const announcedAt = new Map();
  const endedAt = new Map();
  for (const event of events) {
    const payload = isObject(event.payload) ? event.payload : undefined;
    if (!payload || typeof payload.id !== "string") continue;
    if (Object.hasOwn(ANNOUNCING, event.type)) {
      const item = entry(payload.id, ANNOUNCING[event.type]);
      item.payload = payload;
      item.seq = event.seq;
      announcedAt.set(event.seq, payload.id);
    } else if (Object.hasOwn(ENDING, event.type)) {
      const item = entry(payload.id, ENDING[event.type]);
      // A plan's outcome is its event's name (plan.approved, plan.rejected).
      item.outcome = { seq: event.seq, ...(item.kind === "plan" ? { status: event.type.slice("plan.".length) } : {}), ...payload };
      endedAt.set(event.seq, payload.id);
    }
  }
  for (const record of pending) {
    const item = entry(record.id, record.kind);
    item.pending = true;
    item.payload ??= record.payload;
  }
  // Requests sent to clients about each interaction, by connection and index, to find their answers.
  const asked = new Map();
  const open = new Set();
  for (const frame of frames) {
    const key = frameEventKey(frame);
    if (frame.direction === "server" && key && key.sessionId === sessionId) {
      // Which interactions were open when a client answered them all (approve-all, plan/*): announced and not yet ended, as far as the frames so far tell.
      if (key.seq !== undefined && announcedAt.has(key.seq)) open.add(announcedAt.get(key.seq));
      if (key.seq !== undefined && endedAt.has(key.seq)) open.delete(endedAt.get(key.seq));
      // Asked while the interaction was asked about, or as its announcing event was translated;
      // withdrawn as it was settled, or as its outcome event was translated.
      const withdrawal = frame.kind === "notification" && WITHDRAWALS.has(frame.method);
      const id = key.interactionId ?? (key.seq === undefined ? undefined : withdrawal ? endedAt.get(key.seq) : announcedAt.get(key.seq));
      const item = id === undefined ? undefined : byId.get(id);
      if (!item) continue;
      if (frame.kind === "request") {
        item.asked.push(frame);
        asked.set(`${frame.connection}#${frame.index}`, item);
      } else if (withdrawal) item.withdrawn.push(frame);
      continue;
    }
    if (frame.direction !== "client") continue;
    if ((frame.kind === "response" || frame.kind === "error") && frame.answers) {
      const item = asked.get(`${frame.connection}#${frame.answers.index}`);
      if (item) item.answers.push({ by: frame.connection, dialect: frame.dialect, time: frame.time, words: answerWords(frame), frame });
      continue;
    }
    if (frame.kind !== "request" || (!ANSWER_METHODS.has(frame.method) && !ALL_METHODS.has(frame.method) && !PLAN_METHODS.has(frame.method))) continue;
    const message = messageOf(frame);
    const params = isObject(message) && isObject(message.params) ? message.params : {};
    if (params.sessionId !== sessionId) continue;
    const openOf = (kind) => [...open].map((id) => byId.get(id)).filter((i) => i?.kind === kind);
    const targets = ANSWER_METHODS.has(frame.method) ? [byId.get(params.interactionId)] : openOf(PLAN_METHODS.has(frame.method) ? "plan" : "approval");
    for (const item of targets) item?.answers.push({ by: frame.connection, dialect: frame.dialect, time: frame.time, words: answerWords(frame), frame });
  }
  for (const decision of decisions) {
    if (decision.sessionId !== sessionId) continue;
    byId.get(decision.interactionId)?.answers.push({ by: `operator ${decision.by}`, dialect: "inspector", time: decision.at, words: decisionWords(decision) });
  }
  for (const item of byId.values()) {
    item.answers.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
    // An outcome in the log settles it, whatever the pending list (fetched earlier) said.
    if (item.outcome) item.pending = false;
  }
  const last = Number.MAX_SAFE_INTEGER;
  return [...byId.values()].sort((a, b) => (a.seq ?? last) - (b.seq ?? last));
}
