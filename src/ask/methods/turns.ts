import { randomUUID } from "node:crypto";
import type { SessionAbortParams, SessionAbortResult, SessionSendParams, SessionSendResult } from "../../../generated/ask-v1.0.js";
import { askError, sessionNotFound, toAskError } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import type { SessionRecord } from "../../bridge/session-registry.js";
import { RecallMismatchError } from "../../bridge/request-recall.js";
import { deliverWhileRunning, submitOrSteer } from "../../bridge/submit-or-steer.js";

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
  const options = {
    text: params.content,
    turnId: key ?? randomUUID(),
    whileRunning: params.mode === "queue" ? ("queue" as const) : ("steer" as const),
    // Failures after acceptance (e.g. a queued message rejected by a compaction) still reach clients.
    onLateFailure: (error: unknown) => hub.emit({ type: "error", payload: { error: toAskError(error).message, recoverable: true } }),
  };
  const { upstream } = ctx.services;
  const running = hub.running;
  // A refused steer or queue delivered nothing: its refusal is the client's error, like every other.
  const delivery = running ? await deliverWhileRunning(upstream, hub, active ?? "", options) : await submitOrSteer(upstream, hub, options);
  switch (delivery.kind) {
    case "busy":
      // Busy for another reason than a turn that started first (a mutation such as a compaction).
      throw askError("busy", "session.submit: the session is busy with another request; retry once it has finished");
    case "submit":
      return { accepted: true, status: "steered", turnId: delivery.turnId };
    case "queue":
      return { accepted: true, status: "queued", turnId: delivery.turnId };
    case "steer":
      return { accepted: true, status: params.mode === "steer" ? "steered" : "queued", turnId: running ? (active ?? null) : delivery.turnId };
  }
}

/** session/abort. Answers aborted:true whether or not a turn was running, as Ask hosts do: afterwards nothing runs. */
export async function abort({ services, peer }: MethodContext, params: SessionAbortParams): Promise<SessionAbortResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  await services.core.roles.require(record.sessionId, peer.principal, "interrupt", "session/abort");
  await services.upstream.request("session.interrupt", { sessionId: record.sessionId });
  return { aborted: true, sessionId: record.sessionId };
}
