import type { Thread, ThreadItem, ThreadStatus, Turn } from "../../generated/codex-v2.js";
import type { Activity, AgentRun, Snapshot, SubagentActivitiesAgentState } from "../../generated/tau-v18.js";
import type { SubagentActivity } from "../../generated/ask-v1.0.js";
import { toolCallArguments } from "../bridge/message-content.js";
import type { SessionRecord } from "../bridge/session-registry.js";
import { activityOf, spawnedBy } from "../bridge/translation/subagent-events.js";
import { userInput } from "./history.js";
import { TAU_TOOL_SERVER } from "./tool-items.js";

/**
 * Each Tau sub-agent as a child thread, as the Codex app-server presents its own sub-agents: its
 * id is the sub-agent's, its `source` `{subAgent: {thread_spawn: {parent_thread_id, depth}}}`
 * names the parent thread (the Tau session), `parentThreadId` and `agentNickname` (its title)
 * too, and it shares the parent's `sessionId` (one session tree). Its turn is the sub-agent's
 * run: the task it was given as the user's input, what it did (its activities: what it said as
 * `agentMessage` items, the tools it used as `mcpToolCall` items of server `tau`, notices as
 * messages) and its answer, ending completed, failed or interrupted.
 */

/** The id of the turn a sub-agent's run is in its thread. */
export const childTurnId = (agentId: string, runRevision: number) => `${agentId}-run-${runRevision}`;

/** The item an activity is, at its position in the run. */
export function activityThreadItem(turnId: string, index: number, activity: SubagentActivity): ThreadItem {
  const id = `${turnId}-${index}`;
  switch (activity.type) {
    case "assistant":
      return { type: "agentMessage", id, text: activity.text };
    case "notice":
      return { type: "agentMessage", id, text: [activity.title, ...(activity.content ?? [])].join("\n") };
    case "tool": {
      const text = [`${activity.action} ${activity.subject}`, ...(activity.details ?? [])].join("\n");
      const ok = activity.outcome === "succeeded";
      return {
        type: "mcpToolCall",
        id,
        server: TAU_TOOL_SERVER,
        tool: activity.toolName,
        arguments: { subject: activity.subject },
        status: ok ? "completed" : "failed",
        result: ok ? { content: [{ type: "text", text }] } : null,
        error: ok ? null : { message: `${activity.outcome}: ${text}` },
      };
    }
  }
}

/** The task a sub-agent was given: its spawn_agent call's `task`, else its title. */
export function taskOf(snapshot: Snapshot, agent: AgentRun): string {
  const toolId = spawnedBy(snapshot, agent.id);
  const tool = toolId === undefined ? undefined : snapshot.tools[toolId];
  const args = tool && tool.status !== "streaming" ? toolCallArguments(tool.call, snapshot) : undefined;
  return typeof args?.task === "string" ? args.task : agent.title;
}

export function childStatus(agent: AgentRun): ThreadStatus {
  return agent.run.status === "running" ? { type: "active", activeFlags: [] } : { type: "idle" };
}

/** The run as the child thread's one turn (its activities: the lists Tau keeps, at most the last 64). */
export function childTurn(snapshot: Snapshot, agent: AgentRun, list: SubagentActivitiesAgentState | undefined): Turn {
  const { run } = agent;
  const turnId = childTurnId(agent.id, run.revision);
  const activities: Activity[] = list?.runRevision === run.revision ? list.activities : [];
  const items: ThreadItem[] = [{ type: "userMessage", id: `${turnId}-input`, content: userInput(taskOf(snapshot, agent)) }];
  activities.forEach((activity, index) => items.push(activityThreadItem(turnId, index, activityOf(activity))));
  const said = activities.filter((a) => a.type === "assistant").at(-1);
  if (run.status === "succeeded" && (said?.type !== "assistant" || said.text !== run.response)) items.push({ type: "agentMessage", id: `${turnId}-response`, text: run.response });
  const times = { startedAt: Math.floor(run.startedAt / 1000) };
  switch (run.status) {
    case "running":
      return { id: turnId, items, status: "inProgress", error: null, ...times };
    case "succeeded":
      return { id: turnId, items, status: "completed", error: null, ...times, ...ended(run.startedAt, run.finishedAt) };
    case "interrupted":
      return { id: turnId, items, status: "interrupted", error: null, ...times, ...ended(run.startedAt, run.finishedAt) };
    case "failed":
      return { id: turnId, items, status: "failed", error: { message: run.failure.message, codexErrorInfo: "other" }, ...times, ...ended(run.startedAt, run.finishedAt) };
  }
}

const ended = (startedAt: number, finishedAt: number) => ({ completedAt: Math.floor(finishedAt / 1000), durationMs: Math.max(0, Math.round(finishedAt - startedAt)) });

export function childThreadObject(snapshot: Snapshot, agent: AgentRun, serverVersion: string, turns: Turn[]): Thread {
  const finishedAt = agent.run.status === "running" ? agent.run.startedAt : agent.run.finishedAt;
  return {
    id: agent.id,
    sessionId: snapshot.sessionId,
    preview: agent.title,
    ephemeral: false,
    modelProvider: "tau",
    createdAt: Math.floor(agent.createdAt / 1000),
    updatedAt: Math.floor(Math.max(agent.createdAt, finishedAt) / 1000),
    status: childStatus(agent),
    cwd: agent.workingDirectory,
    cliVersion: serverVersion,
    source: { subAgent: { thread_spawn: { parent_thread_id: snapshot.sessionId, depth: 1, agent_nickname: agent.title, agent_path: null, agent_role: null } } },
    turns,
    projectId: null,
    model: agent.model.id,
    parentThreadId: snapshot.sessionId,
    agentNickname: agent.title,
    agentRole: null,
  };
}

/** The child threads of a session, without turns (what thread/list shows). */
export function childThreadsOf(snapshot: Snapshot, serverVersion: string): Thread[] {
  return Object.values(snapshot.agents).map((agent) => childThreadObject(snapshot, agent, serverVersion, []));
}

/** A child thread found among the sessions the gateway holds open: its session and sub-agent. */
export interface FoundChild {
  readonly record: SessionRecord;
  readonly agent: AgentRun;
}

/** The session (of `tenant`) one of whose sub-agents has this id, among `records`. */
export function findChild(records: Iterable<SessionRecord>, agentId: string, tenant: string | undefined): FoundChild | undefined {
  for (const record of records) {
    const agent = record.hub.snapshot?.agents[agentId];
    if (agent && record.tenant === tenant) return { record, agent };
  }
  return undefined;
}
