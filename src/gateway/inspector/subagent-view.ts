import type { Activity, Snapshot, SubagentActivitiesState } from "../../../generated/tau-v18.js";

/**
 * A session's sub-agents as the inspector's session panel shows them: each one's title, model,
 * how its run stands (with its answer or failure), its cost and tokens, and what it did — the
 * activities Tau still keeps of its run (the last 64), the newest few spelt out.
 */

export interface SubagentView {
  agentId: string;
  title: string;
  model: string;
  state: "running" | "succeeded" | "failed" | "interrupted";
  interruptRequested: boolean;
  startedAt: string;
  finishedAt?: string;
  response?: string;
  error?: string;
  cost: number;
  inputTokens: number;
  outputTokens: number;
  /** Activities of the run Tau keeps. */
  activityCount: number;
  /** The newest of them, in words, oldest first. */
  recentActivities: string[];
}

const RECENT = 5;
const TEXT_MAX = 200;

export function subagentsOf(snapshot: Snapshot | undefined, activities: SubagentActivitiesState | undefined): SubagentView[] {
  if (!snapshot) return [];
  return Object.values(snapshot.agents).map((agent) => {
    const { run } = agent;
    const list = activities?.agents[agent.id];
    const kept = list?.runRevision === run.revision ? list.activities : [];
    return {
      agentId: agent.id,
      title: agent.title,
      model: agent.model.id,
      state: run.status,
      interruptRequested: run.interruptRequested,
      startedAt: new Date(run.startedAt).toISOString(),
      ...(run.status === "running" ? {} : { finishedAt: new Date(run.finishedAt).toISOString() }),
      ...(run.status === "succeeded" ? { response: run.response } : run.status === "running" ? {} : { error: run.failure.message }),
      cost: agent.costTotal,
      inputTokens: agent.usage.input,
      outputTokens: agent.usage.output,
      activityCount: kept.length,
      recentActivities: kept.slice(-RECENT).map(describe),
    };
  });
}

function describe(activity: Activity): string {
  const text = activity.type === "assistant" ? activity.text : activity.type === "tool" ? `${activity.toolName}: ${activity.presentation.action} ${activity.presentation.subject} (${activity.outcome})` : `${activity.severity}: ${activity.title}`;
  return text.length > TEXT_MAX ? `${text.slice(0, TEXT_MAX - 1)}…` : text;
}
