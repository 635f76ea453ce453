import type { InteractionRequestPermissionParams, InteractionRequestUserInputParams, ServerRequests } from "../../generated/ask-v1.0.js";
import { ProtocolValidators } from "../validation/validator.js";
import { counted, firstAnswer, type PermissionVote, type ReverseRequester } from "../bridge/interactions/index.js";
import { offeredTo } from "../bridge/decision-offers.js";
import type { SessionRoles } from "../bridge/session-roles.js";
import type { Log } from "../shared/log.js";
import type { AskPeer } from "./peer.js";

type Result<M extends keyof ServerRequests> = ServerRequests[M]["result"];

/**
 * Reverse requests go to every subscribed connection of the session that opted in with the
 * `reverseRequests` capability; the first answer wins. An error answer or an answer that does not
 * fit the registry's result schema counts as a refusal — consent is never inferred. A connection
 * that closes before it answers answered nothing: the others, the interaction methods or the
 * deadline decide. A connection whose principal may not decide (an observer) is not asked at all
 * (decision-offers.ts): it sees approval.required and its outcome in its subscription, and
 * interaction/list tells it `mayDecide: false`.
 */
export class PeerReverseRequester implements ReverseRequester {
  constructor(
    private readonly subscribers: (sessionId: string) => AskPeer[],
    private readonly roles: Pick<SessionRoles, "heard" | "mayDecideOn">,
    private readonly log?: Log,
  ) {}

  requestPermission(sessionId: string, params: InteractionRequestPermissionParams, signal: AbortSignal, vote?: PermissionVote) {
    // Each connection's answer is counted as it comes: one that was a vote leaves the others asked.
    return this.ask("interaction/requestPermission", sessionId, params, signal, { decision: "deny" }, (answer, peer) => counted(answer, peer.principal, vote));
  }

  requestUserInput(sessionId: string, params: InteractionRequestUserInputParams, signal: AbortSignal) {
    return this.ask("interaction/requestUserInput", sessionId, params, signal, undefined);
  }

  /** Ask has no reverse request about plans (its clients decide them with plan/approve and plan/reject): nobody is asked. */
  requestPlanApproval(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  private async ask<M extends keyof ServerRequests>(
    method: M,
    sessionId: string,
    params: ServerRequests[M]["params"],
    signal: AbortSignal,
    refusal: Result<M> | undefined,
    count: (answer: Result<M> | undefined, peer: AskPeer) => Promise<Result<M> | undefined> = async (answer) => answer,
  ): Promise<Result<M> | undefined> {
    const interactionId = params.interactionId ?? params.requestId;
    const reached = this.subscribers(sessionId).filter((p) => p.capabilities.reverseRequests);
    const offered = await Promise.all(reached.map((p) => offeredTo(this.roles, sessionId, p.principal, interactionId)));
    const peers = reached.filter((p, i) => offered[i] && !p.closed);
    if (!peers.length || signal.aborted) return undefined;
    const schema = ProtocolValidators.shared().get("ask");
    const answers = peers.map(async (peer) => {
      try {
        const result = await peer.request(method, params, signal);
        return count(await this.roles.heard(sessionId, peer.principal, schema.result(method, result, "", "server").ok ? (result as Result<M>) : refusal, method, this.log), peer);
      } catch {
        // A connection that went away answered nothing: leaving decides nothing.
        // Nor does a request withdrawn because the interaction was settled.
        return peer.closed || signal.aborted ? undefined : count(await this.roles.heard(sessionId, peer.principal, refusal, method, this.log), peer);
      }
    });
    // The first connection to answer decides; a refusal that cannot be expressed (user input)
    // leaves the decision to the others, the interaction methods or the deadline.
    return firstAnswer(answers);
  }
}
