import type {
  InteractionApproveAllParams,
  InteractionApproveAllResult,
  InteractionApproveParams,
  InteractionApproveResult,
  InteractionListParams,
  InteractionListResult,
  InteractionRejectAllParams,
  InteractionRejectAllResult,
  InteractionRejectParams,
  InteractionRejectResult,
  InteractionRespondParams,
  InteractionRespondResult,
  PlanApproveParams,
  PlanApproveResult,
  PlanRejectParams,
  PlanRejectResult,
} from "../../../generated/ask-v1.0.js";
import { AskError, sessionNotFound } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import { InteractionError } from "../interactions/index.js";

/** interaction/* and plan/*: resolve the gateway's interactions of one session (DESIGN §4.4). */
async function interactionsOf({ services, peer }: MethodContext, sessionId: string) {
  const record = await services.sessions.access(sessionId, peer.tenant);
  if (record.closed) throw sessionNotFound(sessionId);
  return record.interactions;
}

/** InteractionError codes are registry error names (-32006, -32007, -32602). */
function resolving<T>(action: () => T): T {
  try {
    return action();
  } catch (err) {
    if (err instanceof InteractionError) throw AskError.of(err.code, err.message);
    throw err;
  }
}

export async function list(ctx: MethodContext, p: InteractionListParams): Promise<InteractionListResult> {
  return { interactions: (await interactionsOf(ctx, p.sessionId)).list() };
}

export async function approve(ctx: MethodContext, p: InteractionApproveParams): Promise<InteractionApproveResult> {
  const interactions = await interactionsOf(ctx, p.sessionId);
  resolving(() => interactions.approve(p.interactionId, p.scope));
  return { approved: true, interactionId: p.interactionId };
}

export async function reject(ctx: MethodContext, p: InteractionRejectParams): Promise<InteractionRejectResult> {
  const interactions = await interactionsOf(ctx, p.sessionId);
  resolving(() => interactions.reject(p.interactionId, p.feedback));
  return { rejected: true, interactionId: p.interactionId };
}

export async function approveAll(ctx: MethodContext, p: InteractionApproveAllParams): Promise<InteractionApproveAllResult> {
  const interactions = await interactionsOf(ctx, p.sessionId);
  return { approved: resolving(() => interactions.approveAll(p.scope)) };
}

export async function rejectAll(ctx: MethodContext, p: InteractionRejectAllParams): Promise<InteractionRejectAllResult> {
  const interactions = await interactionsOf(ctx, p.sessionId);
  return { rejected: resolving(() => interactions.rejectAll(p.feedback)) };
}

export async function respond(ctx: MethodContext, p: InteractionRespondParams): Promise<InteractionRespondResult> {
  const interactions = await interactionsOf(ctx, p.sessionId);
  resolving(() => interactions.respond(p.interactionId, p.response));
  return { responded: true, interactionId: p.interactionId };
}

export async function planApprove(ctx: MethodContext, p: PlanApproveParams): Promise<PlanApproveResult> {
  const interactions = await interactionsOf(ctx, p.sessionId);
  resolving(() => interactions.approvePlan());
  return { approved: true };
}

export async function planReject(ctx: MethodContext, p: PlanRejectParams): Promise<PlanRejectResult> {
  const interactions = await interactionsOf(ctx, p.sessionId);
  resolving(() => interactions.rejectPlan(p.feedback));
  return { rejected: true };
}
