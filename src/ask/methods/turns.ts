import { randomUUID } from "node:crypto";
import type { Event, SessionAbortParams, SessionAbortResult, SessionSendParams, SessionSendResult } from "../../../generated/ask-v1.0.js";
import type { ClientRequests as TauRequests } from "../../../generated/tau-v18.js";
import { TauResponseError, UpstreamUnavailableError } from "../../tau/upstream.js";
import { askError, sessionNotFound, toAskError } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import type { SessionRecord } from "../../bridge/session-registry.js";
import { RecallMismatchError } from "../../bridge/request-recall.js";
import { turnAcceptance } from "../../bridge/turn-acceptance.js";

/**
 * session/send. An idle session starts a turn (status steered). A running one takes the message
 * into the running turn at its next model call (Tau's steer), which Ask hosts call queued; the
 * `mode` extension picks explicitly, with a status for each: steer → steered, queue (Tau's queue,
 * a turn of its own at the next turn boundary) → queued.
 *
 * Tau answers submit/queue/steer only when the turn settles, so acceptance is read
 * from the session's own event stream: the turn starting (submit), or the message appearing in the
 * pending queue (queue, steer). A later failure of an accepted message is reported as an `error`
 * event, since the send request was already answered.
 */
export async function send(ctx: MethodContext, params: SessionSendParams): Promise<SessionSendResult> {
  const { tauGatewayRequestKey: key, ...rest } = params;
  if (key === undefined) return sendOnce(ctx, params);
  // A relay's session/send sent again after its connection was cut answers as the first did (request-recall.ts).
  try {
    return await ctx.services.core.recall.once({ tenant: ctx.peer.tenant, method: "session/send" }, key.toLowerCase(), rest, () =>
      sendOnce(ctx, params, key.toLowerCase()).catch((error: unknown) => {
        // As the client gets it, so that a repeat on another replica answers the same.
        throw toAskError(error);
      }),
    );
  } catch (error) {
    if (error instanceof RecallMismatchError) throw askError("invalid_params", `tauGatewayRequestKey: ${error.message}`);
    throw error;
  }
}

/** `key`: the relay's request key, the id of the turn the message starts or queues (Tau refuses a second user message under it). */
async function sendOnce(ctx: MethodContext, params: SessionSendParams, key?: string): Promise<SessionSendResult> {
  const { sessions } = ctx.services;
  const record = await sessions.access(params.sessionId, ctx.peer.tenant);
  await ctx.services.core.roles.require(record.sessionId, ctx.peer.principal, record.hub.running ? "steer" : "prompt", "session/send");
  // Checked and registered in one synchronous step: a close that began while access resolved
  // refuses this send; one that begins after it waits for it (sends-in-flight.ts).
  if (sessions.isClosed(record.sessionId)) throw sessionNotFound(record.sessionId);
  return record.sends.track(deliver(ctx, record, params, key));
}

async function deliver(ctx: MethodContext, record: SessionRecord, params: SessionSendParams, key: string | undefined): Promise<SessionSendResult> {
  const { hub } = record;
  const active = hub.activeTurnId;
  if (params.expectedTurnId !== undefined && params.expectedTurnId !== active) {
    return { accepted: false, status: "stale", turnId: active ?? null };
  }
  if (!hub.running) {
    const turnId = key ?? randomUUID();
    const submitted = await accept(
      ctx,
      record,
      "session.submit",
      { sessionId: record.sessionId, text: params.content, historyEntryId: turnId },
      (e) => e.type === "turn.started" && e.payload.turnId === turnId,
      "fallback",
    );
    if (submitted === "busy") {
      // Lost the race with another client's turn: the session is running now, so steer or queue.
      // Busy for another reason (a mutation such as a compaction): retrying would only spin.
      if (!hub.running) throw askError("busy", "session.submit: the session is busy with another request; retry once it has finished");
      return sendOnce(ctx, { ...params, expectedTurnId: undefined }, key);
    }
    return { accepted: true, status: "steered", turnId };
  }
  if (params.mode === "queue") {
    const turnId = key ?? randomUUID();
    await accept(ctx, record, "session.queue", { sessionId: record.sessionId, text: params.content, historyEntryId: turnId }, (e) =>
      (e.type === "queue.updated" && e.payload.messages.some((m) => m.id === turnId || (m.mode === "queue" && m.text === params.content))) ||
      (e.type === "turn.started" && e.payload.turnId === turnId),
      "fail",
    );
    return { accepted: true, status: "queued", turnId };
  }
  await accept(
    ctx,
    record,
    "session.steer",
    { sessionId: record.sessionId, text: params.content },
    (e) => (e.type === "queue.updated" && e.payload.messages.some((m) => m.mode === "steer" && m.text === params.content)) || e.type === "turn.started",
    "fail",
  );
  return { accepted: true, status: params.mode === "steer" ? "steered" : "queued", turnId: active ?? null };
}

/** session/abort. Answers aborted:true whether or not a turn was running, as Ask hosts do: afterwards nothing runs. */
export async function abort({ services, peer }: MethodContext, params: SessionAbortParams): Promise<SessionAbortResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  await services.core.roles.require(record.sessionId, peer.principal, "interrupt", "session/abort");
  await services.upstream.request("session.interrupt", { sessionId: record.sessionId });
  return { aborted: true, sessionId: record.sessionId };
}

/** The Tau requests that deliver a user message; each answers only when its turn settles. */
type TurnMethod = "session.submit" | "session.queue" | "session.steer";

/**
 * Sends a turn request and resolves once an event shows Tau accepted it. A `busy` refusal resolves
 * with "busy" when the caller has a fallback (a submit that lost the race with another turn steers
 * or queues instead); otherwise it is the client's -32010, like every other refusal its error —
 * a refused steer or queue delivered nothing.
 */
async function accept<M extends TurnMethod>(
  ctx: MethodContext,
  record: SessionRecord,
  method: M,
  params: TauRequests[M]["params"],
  accepted: (event: Event) => boolean,
  onBusy: "fallback" | "fail",
): Promise<"accepted" | "busy"> {
  const { hub } = record;
  const { outcome, request } = await turnAcceptance(hub.log, () => ctx.services.upstream.request(method, params), accepted);
  if (outcome === "accepted") {
    // Failures after acceptance (e.g. a queued message rejected by a compaction) still reach clients.
    // A lost connection is not one: the message was delivered, and the resync after the reconnect
    // reports how its turn ended.
    request.catch((err: unknown) => {
      if (err instanceof UpstreamUnavailableError) return;
      hub.emit({ type: "error", payload: { error: toAskError(err).message, recoverable: true } });
    });
    return "accepted";
  }
  if (onBusy === "fallback" && outcome.error instanceof TauResponseError && outcome.error.code === "busy") return "busy";
  throw outcome.error;
}
