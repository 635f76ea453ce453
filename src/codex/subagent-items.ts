import type { CollabAgentState, CollabAgentStatus, CollabAgentTool, ThreadItem } from "../../generated/codex-v2.js";
import type { AgentRun, Snapshot } from "../../generated/tau-v18.js";

/**
 * Tau's sub-agent tools as Codex presents its own: `spawn_agent`, `wait_for_agents` and the
 * other agent tools are `collabAgentToolCall` items of the parent's turn (sender: the parent
 * thread; receivers: the child threads, one per sub-agent, whose ids are the sub-agents'), and a
 * sub-agent's start and end are `subAgentActivity` items. What an agent looks like here is what
 * both the live events and the snapshot give: its id, title, model, and how its run stands.
 */

export type CollabItem = Extract<ThreadItem, { type: "collabAgentToolCall" }>;
export type ActivityItem = Extract<ThreadItem, { type: "subAgentActivity" }>;

/** A sub-agent as the items name it. */
export interface KnownAgent {
  readonly agentId: string;
  readonly title: string;
  readonly model: string;
  readonly reasoning?: string;
  /** The spawn_agent call that started it, when known. */
  readonly toolCallId?: string;
  /** running, or how the run ended. */
  readonly status: "running" | "succeeded" | "failed" | "interrupted";
  /** The response or the failure. */
  readonly message?: string;
}

const COLLAB_TOOLS: Record<string, CollabAgentTool> = {
  spawn_agent: "spawnAgent",
  send_input_to_agent: "sendInput",
  wait_for_agents: "wait",
  interrupt_agent: "interruptAgent",
  list_agents: "listAgents",
};

/** The Codex collab tool a Tau tool is, if it is one of Tau's agent tools. */
export const collabToolOf = (toolName: string): CollabAgentTool | undefined => COLLAB_TOOLS[toolName];

const STATUS: Record<KnownAgent["status"], CollabAgentStatus> = { running: "running", succeeded: "completed", failed: "errored", interrupted: "interrupted" };

/** The item when the call starts: its receivers are known once it has started them (spawn) or from its arguments (wait). */
export function startedCollabItem(id: string, tool: CollabAgentTool, senderThreadId: string, args: Record<string, unknown> | undefined): CollabItem {
  const named = Array.isArray(args?.agentIds) ? (args!.agentIds as unknown[]).filter((a): a is string => typeof a === "string") : [];
  const prompt = typeof args?.task === "string" ? args.task : typeof args?.message === "string" ? args.message : null;
  return { type: "collabAgentToolCall", id, tool, status: "inProgress", senderThreadId, receiverThreadIds: named, agentsStates: {}, prompt, model: null, reasoningEffort: null };
}

/** The item once the call has ended, naming its receivers and how each stands. */
export function completedCollabItem(started: CollabItem, isError: boolean, receivers: readonly KnownAgent[]): CollabItem {
  const ids = started.receiverThreadIds.length > 0 ? started.receiverThreadIds : receivers.map((a) => a.agentId);
  const states: Record<string, CollabAgentState> = {};
  for (const id of ids) {
    const agent = receivers.find((a) => a.agentId === id);
    states[id] = agent ? { status: STATUS[agent.status], message: agent.message ?? null } : { status: "notFound", message: null };
  }
  const spawned = started.tool === "spawnAgent" ? receivers.find((a) => ids.includes(a.agentId)) : undefined;
  return {
    ...started,
    status: isError ? "failed" : "completed",
    receiverThreadIds: ids,
    agentsStates: states,
    ...(spawned ? { model: spawned.model, reasoningEffort: spawned.reasoning ?? null } : {}),
  };
}

/** A sub-agent's start or end in its parent's turn. */
export function activityItem(agent: KnownAgent, kind: ActivityItem["kind"]): ActivityItem {
  return { type: "subAgentActivity", id: `${agent.agentId}-${kind}`, kind, agentThreadId: agent.agentId, agentPath: agent.title, model: agent.model, reasoningEffort: agent.reasoning ?? null };
}

/** The kind of the activity item that ends a run (Codex has no failed kind: a failure is completed too). */
export const endKind = (agent: KnownAgent): ActivityItem["kind"] => (agent.status === "interrupted" ? "interrupted" : "completed");

/** A snapshot's AgentRun as the items know it. */
export function knownAgent(agent: AgentRun, toolCallId?: string): KnownAgent {
  const { run } = agent;
  const message = run.status === "succeeded" ? run.response : run.status === "running" ? undefined : run.failure.message;
  return {
    agentId: agent.id,
    title: agent.title,
    model: agent.model.id,
    reasoning: agent.model.reasoning,
    ...(toolCallId === undefined ? {} : { toolCallId }),
    status: run.status,
    ...(message === undefined ? {} : { message }),
  };
}

/** Which agents a finished tool call of the snapshot dealt with: its result's details name them (`agentId`, `agentIds`). */
export function agentsOfCall(snapshot: Snapshot, toolId: string): KnownAgent[] {
  const tool = snapshot.tools[toolId];
  if (!tool || tool.status === "streaming" || !tool.resultMessageId) return [];
  const result = snapshot.messages.find((m) => m.id === tool.resultMessageId)?.message;
  const details = (result?.role === "toolResult" ? result.details : undefined) as { agentId?: unknown; agentIds?: unknown } | undefined;
  const ids = [details?.agentId, ...(Array.isArray(details?.agentIds) ? details.agentIds : [])].filter((id): id is string => typeof id === "string");
  return ids.flatMap((id) => (snapshot.agents[id] ? [knownAgent(snapshot.agents[id]!, tool.toolName === "spawn_agent" ? toolId : undefined)] : []));
}
