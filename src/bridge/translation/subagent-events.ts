import type { SubagentActivity } from "../../../generated/ask-v1.0.js";
import type { Activity, AgentRun, SessionSubagentActivitiesMessage, Snapshot, SubagentActivitiesState } from "../../../generated/tau-v18.js";
import { draft, type EventDraft } from "../event-draft.js";

/**
 * Tau's sub-agents (the snapshot's `agents`, the `session.subagentActivities` channel) as events
 * in no dialect's words: `subagent.started` when a run begins, `subagent.activity` with what it
 * did since (only the new activities: Tau sends a run's whole list each time, at most the last
 * 64, so the new ones are what lies beyond the overlap with the list before), `subagent.completed`
 * once when it ends, `subagent.removed` when Tau disposes of it. Each run is reported once,
 * whichever connection saw it; what a baseline holds counts as seen.
 */

/** The spawn_agent tool's name, whose result's details name the agent it started. */
const SPAWN_TOOL = "spawn_agent";

interface KnownList {
  readonly runRevision: number;
  /** Position in the run of `activities[0]`. */
  readonly first: number;
  readonly activities: readonly Activity[];
}

const runKey = (agentId: string, revision: number) => `${agentId}#${revision}`;

export class SubagentEvents {
  private readonly started = new Set<string>();
  private readonly ended = new Set<string>();
  private readonly lists = new Map<string, KnownList>();
  private activitiesRevision = 0;

  /** What `snapshot` and `activities` hold counts as reported. */
  absorb(snapshot: Snapshot, activities?: SubagentActivitiesState): void {
    for (const agent of Object.values(snapshot.agents)) {
      const key = runKey(agent.id, agent.run.revision);
      this.started.add(key);
      if (agent.run.status !== "running") this.ended.add(key);
    }
    if (activities) this.absorbActivities(activities);
  }

  absorbActivities(state: SubagentActivitiesState): void {
    this.activitiesRevision = state.revision;
    for (const [agentId, list] of Object.entries(state.agents)) this.lists.set(agentId, { runRevision: list.runRevision, first: 0, activities: list.activities });
  }

  /** Every sub-agent of `snapshot` told whole (a session's history at first sight): its start, what `activities` holds of it, its end. */
  history(snapshot: Snapshot, activities?: SubagentActivitiesState): EventDraft[] {
    const out: EventDraft[] = [];
    for (const agent of Object.values(snapshot.agents)) {
      out.push(startedEvent(agent, snapshot, undefined));
      const list = activities?.agents[agent.id];
      if (list && list.runRevision === agent.run.revision && list.activities.length > 0) {
        out.push(draft("subagent.activity", { agentId: agent.id, runRevision: list.runRevision, index: 0, activities: list.activities.map(activityOf) }));
      }
      if (agent.run.status !== "running") out.push(completedEvent(agent));
    }
    this.absorb(snapshot, activities);
    return out;
  }

  /** An `agent.set` of a delta (`after`: the snapshot it led to). */
  agent(agent: AgentRun, after: Snapshot, out: EventDraft[]): void {
    const key = runKey(agent.id, agent.run.revision);
    if (!this.started.has(key)) {
      this.started.add(key);
      const running = Object.values(after.turns).filter((t) => t.state === "running");
      out.push(startedEvent(agent, after, running[running.length - 1]?.userHistoryEntryId));
    }
    if (agent.run.status !== "running" && !this.ended.has(key)) {
      this.ended.add(key);
      out.push(completedEvent(agent));
    }
  }

  removed(agentId: string, out: EventDraft[]): void {
    this.lists.delete(agentId);
    out.push(draft("subagent.removed", { agentId }));
  }

  /** A message of the activity channel; applied only when newer (spec §6.3). */
  message(message: SessionSubagentActivitiesMessage): EventDraft[] {
    if (message.revision <= this.activitiesRevision) return [];
    this.activitiesRevision = message.revision;
    const out: EventDraft[] = [];
    for (const change of message.changes) {
      if (change.type === "agent.remove") this.lists.delete(change.agentId);
      else this.list(change.agentId, change.state.runRevision, change.state.activities, out);
    }
    return out;
  }

  /** The channel's whole state (a fresh observe): what changed since is reported, as by a message. */
  state(state: SubagentActivitiesState): EventDraft[] {
    this.activitiesRevision = state.revision;
    const out: EventDraft[] = [];
    for (const [agentId, list] of Object.entries(state.agents)) this.list(agentId, list.runRevision, list.activities, out);
    return out;
  }

  /** After a reset or resync: every run never reported starts, every one that ended since ends. */
  reconcile(snapshot: Snapshot, out: EventDraft[]): void {
    for (const agent of Object.values(snapshot.agents)) this.agent(agent, snapshot, out);
  }

  private list(agentId: string, runRevision: number, activities: readonly Activity[], out: EventDraft[]): void {
    const known = this.lists.get(agentId);
    const same = known?.runRevision === runRevision ? known : undefined;
    const { first, fresh } = same ? beyond(same, activities) : { first: 0, fresh: activities };
    this.lists.set(agentId, { runRevision, first, activities });
    if (fresh.length === 0) return;
    out.push(draft("subagent.activity", { agentId, runRevision, index: first + activities.length - fresh.length, activities: fresh.map(activityOf) }));
  }
}

/**
 * Which of `next` are new after `known`: the list keeps its run's last activities, so `next`
 * starts where some suffix of the known list starts (the fewest dropped first); no overlap at all
 * means all of `next` is new.
 */
function beyond(known: KnownList, next: readonly Activity[]): { first: number; fresh: readonly Activity[] } {
  const before = known.activities.map((a) => JSON.stringify(a));
  const after = next.map((a) => JSON.stringify(a));
  for (let dropped = 0; dropped <= before.length; dropped++) {
    const rest = before.slice(dropped);
    if (rest.length <= after.length && rest.every((a, i) => a === after[i])) {
      return { first: known.first + dropped, fresh: next.slice(rest.length) };
    }
  }
  return { first: known.first + before.length, fresh: next };
}

function startedEvent(agent: AgentRun, snapshot: Snapshot, turnId: string | undefined): EventDraft {
  const toolCallId = spawnedBy(snapshot, agent.id);
  return draft("subagent.started", {
    agentId: agent.id,
    runRevision: agent.run.revision,
    title: agent.title,
    model: agent.model.id,
    reasoning: agent.model.reasoning,
    workingDirectory: agent.workingDirectory,
    ...(turnId === undefined ? {} : { turnId }),
    ...(toolCallId === undefined ? {} : { toolCallId }),
  });
}

function completedEvent(agent: AgentRun): EventDraft {
  const { run } = agent;
  const common = {
    agentId: agent.id,
    runRevision: run.revision,
    title: agent.title,
    inputTokens: Math.max(0, Math.round(agent.usage.input)),
    outputTokens: Math.max(0, Math.round(agent.usage.output)),
    cost: Math.max(0, agent.costTotal),
    ...(run.status !== "running" && run.finishedAt >= run.startedAt ? { durationMs: Math.round(run.finishedAt - run.startedAt) } : {}),
  };
  switch (run.status) {
    case "succeeded":
      return draft("subagent.completed", { ...common, status: "succeeded", response: run.response });
    case "failed":
      return draft("subagent.completed", { ...common, status: "failed", error: run.failure.message });
    case "interrupted":
      return draft("subagent.completed", { ...common, status: "interrupted", error: run.failure.message });
    case "running":
      throw new Error("a running sub-agent has not completed");
  }
}

/** The spawn_agent call that started the agent: the one whose result names it, else the one running now. */
export function spawnedBy(snapshot: Snapshot, agentId: string): string | undefined {
  const spawns = Object.values(snapshot.tools).filter((t) => t.toolName === SPAWN_TOOL);
  for (const tool of spawns) {
    if (tool.status === "streaming" || !tool.resultMessageId) continue;
    const result = snapshot.messages.find((m) => m.id === tool.resultMessageId)?.message;
    if (result?.role === "toolResult" && (result.details as { agentId?: unknown } | undefined)?.agentId === agentId) return tool.id;
  }
  return spawns.find((t) => t.status === "running")?.id;
}

export function activityOf(activity: Activity): SubagentActivity {
  switch (activity.type) {
    case "assistant":
      return { type: "assistant", text: activity.text };
    case "tool": {
      const details = activity.presentation.details.map((d) => d.text);
      return {
        type: "tool",
        toolName: activity.toolName,
        outcome: activity.outcome,
        action: activity.presentation.action,
        subject: activity.presentation.subject,
        ...(details.length ? { details } : {}),
      };
    }
    case "notice":
      return { type: "notice", severity: activity.severity, title: activity.title, ...(activity.content ? { content: activity.content } : {}) };
  }
}
