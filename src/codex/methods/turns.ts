import { randomUUID } from "node:crypto";
import type {
  TurnInterruptParams,
  TurnInterruptResult,
  TurnStartParams,
  TurnStartResult,
  TurnSteerParams,
  TurnSteerResult,
} from "../../../generated/codex-v2.js";
import { RecallMismatchError } from "../../bridge/request-recall.js";
import { deliverWhileRunning, submitOrSteer } from "../../bridge/submit-or-steer.js";
import { modeChangeAllowed } from "../../bridge/mode-changes.js";
import { approvalModeOf, requestedPolicy } from "../approval-policy.js";
import { CODEX_FAILURES, codexError } from "../codex-errors.js";
import { rpcFailure } from "../../bridge/rpc-failures.js";
import type { CodexMethodContext } from "../context.js";
import type { CodexThread } from "../thread.js";
import { runningTurn } from "../running-turn.js";
import { inputText } from "../user-input.js";
import { childTurnId } from "../child-threads.js";

/**
 * turn/*: a turn is a Tau turn, its id the id of its user message. The response to turn/start and
 * turn/interrupt goes out before the turn's notifications, which these requests cause (the thread
 * sends them to the client as caused by its request): clients subscribe to a turn only once they
 * know its id.
 */


export async function turnStart(ctx: CodexMethodContext, params: TurnStartParams): Promise<TurnStartResult> {
  const { tauGatewayRequestKey: key, ...rest } = params;
  if (key === undefined) return startTurn(ctx, params);
  // A relay's turn/start sent again after its connection was cut answers as the first did (request-recall.ts).
  try {
    return await ctx.services.core.recall.once({ tenant: ctx.peer.tenant, method: "turn/start" }, key.toLowerCase(), rest, () =>
      startTurn(ctx, params, key.toLowerCase()).catch((error: unknown) => {
        // As the client gets it, so that a repeat on another replica answers the same.
        throw rpcFailure(error, CODEX_FAILURES);
      }),
    );
  } catch (error) {
    if (error instanceof RecallMismatchError) throw codexError("invalid_params", `tauGatewayRequestKey: ${error.message}`);
    throw error;
  }
}

/** `turnId`: the id of the turn it starts (a relay's request key), so that Tau refuses a second user message under it. */
async function startTurn(ctx: CodexMethodContext, params: TurnStartParams, turnId: string = randomUUID()): Promise<TurnStartResult> {
  const { services, peer } = ctx;
  await refuseChild(ctx, params.threadId, "start a turn on");
  const thread = await services.threads.open(params.threadId, peer.tenant);
  await services.core.roles.require(thread.threadId, peer.principal, thread.record.hub.activeTurnId ? "steer" : "prompt", "turn/start");
  const text = inputText(params.input);
  const policy = requestedPolicy(params.approvalPolicy, peer.client.experimentalApi);
  if (policy !== undefined && (await modeChangeAllowed(services.core.roles, thread.record.interactions, thread.threadId, peer.principal, approvalModeOf(policy), "turn/start"))) {
    await thread.setApprovalPolicy(policy);
  }
  thread.attach(peer, ctx.cause);
  // A turn/start during a running turn (or one that started first) gets that turn back, as in Codex; its input steers the turn rather than being lost.
  const delivery = await submitOrSteer(services.core.hosts, thread.record.hub, {
    text,
    turnId,
    onLateFailure: (error) => services.log?.("debug", "session.submit ended with an error after the turn started", { threadId: thread.threadId, error: String(error) }),
  });
  if (delivery.kind === "busy") throw delivery.error;
  return { turn: runningTurn(delivery.turnId) };
}

export async function turnSteer(ctx: CodexMethodContext, params: TurnSteerParams): Promise<TurnSteerResult> {
  await refuseChild(ctx, params.threadId, "steer");
  const thread = await ctx.services.threads.open(params.threadId, ctx.peer.tenant);
  await ctx.services.core.roles.require(thread.threadId, ctx.peer.principal, "steer", "turn/steer");
  const active = thread.record.hub.activeTurnId;
  if (!active) throw codexError("invalid_request", "no active turn to steer");
  if (params.expectedTurnId !== active) throw codexError("invalid_request", `expected active turn id \`${params.expectedTurnId}\` but found \`${active}\``);
  const text = inputText(params.input);
  thread.attach(ctx.peer);
  return { turnId: (await deliverWhileRunning(ctx.services.core.hosts, thread.record.hub, active, { text })).turnId };
}

export async function turnInterrupt(ctx: CodexMethodContext, params: TurnInterruptParams): Promise<TurnInterruptResult> {
  const child = await ctx.services.threads.openChild(params.threadId, ctx.peer.tenant);
  await ctx.services.core.roles.require(child?.parent.threadId ?? params.threadId, ctx.peer.principal, "interrupt", "turn/interrupt");
  if (child) return interruptChild(ctx, child.parent, child.agentId, params.turnId);
  const thread = await ctx.services.threads.open(params.threadId, ctx.peer.tenant);
  const active = thread.record.hub.activeTurnId;
  if (!active) throw codexError("invalid_request", "no active turn to interrupt");
  if (params.turnId !== active) throw codexError("invalid_request", `expected active turn id \`${params.turnId}\` but found \`${active}\``);
  thread.causedBy(ctx.peer, ctx.cause);
  thread.interrupting(active);
  await ctx.services.core.hosts.request("session.interrupt", { sessionId: thread.threadId });
  return {};
}

/**
 * turn/interrupt on a sub-agent's thread interrupts that sub-agent (Tau's session.interruptSubagent,
 * which leaves the parent's turn alone); its turn/completed `interrupted` follows on the child thread.
 */
async function interruptChild(ctx: CodexMethodContext, parent: CodexThread, agentId: string, turnId: string): Promise<TurnInterruptResult> {
  const agent = parent.snapshot.agents[agentId];
  if (!agent || agent.run.status !== "running") throw codexError("invalid_request", "no active turn to interrupt");
  const active = childTurnId(agentId, agent.run.revision);
  if (turnId !== active) throw codexError("invalid_request", `expected active turn id \`${turnId}\` but found \`${active}\``);
  parent.subagents.attachChild(agentId, ctx.peer, ctx.cause);
  await ctx.services.core.hosts.request("session.interruptSubagent", { sessionId: parent.threadId, subagentId: agentId });
  return {};
}

/** A sub-agent's thread takes no input from a client: Tau gives a sub-agent work only through its parent. */
async function refuseChild(ctx: CodexMethodContext, threadId: string, what: string): Promise<void> {
  if (await ctx.services.threads.openChild(threadId, ctx.peer.tenant)) {
    throw codexError("invalid_request", `cannot ${what} the thread of sub-agent ${threadId}: Tau gives a sub-agent work only through its parent thread`);
  }
}
