import type { SessionUpdate, ToolCallContent } from "../../generated/acp-v1.js";
import type { Event, SubagentActivity } from "../../generated/ask-v1.0.js";
import type { Snapshot, SubagentActivitiesState } from "../../generated/tau-v18.js";
import { activityOf } from "../bridge/translation/subagent-events.js";

/**
 * Tau's sub-agents as ACP allows today: each run is a tool call card of its own (ACP v1 has no
 * child sessions yet), titled after the sub-agent, `in_progress` while it works, its content the
 * activities so far (each update replaces the list, as ACP's content does) and then its answer,
 * `completed` or `failed` (ACP has no cancelled status for a tool call: an interrupted run is
 * failed, and says so). The draft's child-session fields ride in `_meta.subagent`: `sessionId`
 * (the sub-agent's id, which session/cancel takes to interrupt it), `title`, `capabilities`
 * (`cancel` while it runs) and the run's `state`.
 */

interface Card {
  readonly title: string;
  readonly activities: SubagentActivity[];
  finished: boolean;
}

/** A run's card id (a sub-agent's first run keeps the plain id). */
export const subagentCardId = (agentId: string, runRevision: number) => (runRevision === 1 ? `subagent-${agentId}` : `subagent-${agentId}-${runRevision}`);

/** Activities a card keeps, as Tau's channel does. */
const MAX_SHOWN = 64;

export class SubagentCards {
  private readonly cards = new Map<string, Card>();

  /** `snapshot`: the session's, to announce the card of a run whose start this connection never saw (it resumed meanwhile). */
  translate(event: Event, snapshot?: Snapshot): SessionUpdate[] {
    switch (event.type) {
      case "subagent.started": {
        const { agentId, runRevision, title, model } = event.payload;
        const toolCallId = subagentCardId(agentId, runRevision);
        if (this.cards.has(toolCallId)) return [];
        this.cards.set(toolCallId, { title, activities: [], finished: false });
        return [
          {
            sessionUpdate: "tool_call",
            toolCallId,
            title: `Sub-agent: ${title}`,
            kind: "other",
            status: "in_progress",
            rawInput: { agentId, title, model },
            _meta: { subagent: { sessionId: agentId, title, capabilities: { cancel: {} }, state: "running" } },
          },
        ];
      }
      case "subagent.activity": {
        const { agentId, runRevision, activities } = event.payload;
        const toolCallId = subagentCardId(agentId, runRevision);
        const card = this.cards.get(toolCallId);
        if (!card) {
          const agent = snapshot?.agents[agentId];
          if (!agent || agent.run.revision !== runRevision) return [];
          const started = this.translate({ type: "subagent.started", seq: 0, payload: { agentId, runRevision, title: agent.title, model: agent.model.id, workingDirectory: agent.workingDirectory } });
          return [...started, ...this.translate(event)];
        }
        if (card.finished) return [];
        card.activities.push(...activities);
        card.activities.splice(0, Math.max(0, card.activities.length - MAX_SHOWN));
        return [{ sessionUpdate: "tool_call_update", toolCallId, content: contentOf(card.activities) }];
      }
      case "subagent.completed": {
        const { agentId, runRevision, status, response, error, inputTokens, outputTokens, cost } = event.payload;
        const toolCallId = subagentCardId(agentId, runRevision);
        const card = this.cards.get(toolCallId);
        if (card?.finished) return [];
        const ending = status === "succeeded" ? (response ?? "") : status === "interrupted" ? `Interrupted: ${error ?? "the sub-agent was interrupted"}` : `Failed: ${error ?? "the sub-agent failed"}`;
        const content = [...contentOf(card?.activities ?? []), text(ending)];
        const update: SessionUpdate = {
          sessionUpdate: card ? "tool_call_update" : "tool_call",
          toolCallId,
          ...(card ? {} : { title: `Sub-agent: ${event.payload.title}`, kind: "other" as const }),
          status: status === "succeeded" ? "completed" : "failed",
          content,
          rawOutput: { status, ...(response === undefined ? {} : { response }), ...(error === undefined ? {} : { error }), inputTokens, outputTokens, cost },
          _meta: { subagent: { sessionId: agentId, title: event.payload.title, capabilities: null, state: status } },
        } as SessionUpdate;
        this.cards.set(toolCallId, { title: event.payload.title, activities: card?.activities ?? [], finished: true });
        return [update];
      }
      default:
        return [];
    }
  }

  /** The cards of the session's sub-agents as they stand (session/load), each counted as told. */
  replay(snapshot: Snapshot, activities: SubagentActivitiesState | undefined): SessionUpdate[] {
    const out: SessionUpdate[] = [];
    for (const agent of Object.values(snapshot.agents)) {
      const { run } = agent;
      const list = activities?.agents[agent.id];
      const shown = list?.runRevision === run.revision ? list.activities.map(activityOf) : [];
      out.push(...this.translate({ type: "subagent.started", seq: 0, payload: { agentId: agent.id, runRevision: run.revision, title: agent.title, model: agent.model.id, workingDirectory: agent.workingDirectory } }));
      if (shown.length) out.push(...this.translate({ type: "subagent.activity", seq: 0, payload: { agentId: agent.id, runRevision: run.revision, index: 0, activities: shown } }));
      if (run.status === "running") continue;
      const usage = { inputTokens: Math.max(0, Math.round(agent.usage.input)), outputTokens: Math.max(0, Math.round(agent.usage.output)), cost: Math.max(0, agent.costTotal) };
      const ending = run.status === "succeeded" ? { status: run.status, response: run.response } : { status: run.status, error: run.failure.message };
      out.push(...this.translate({ type: "subagent.completed", seq: 0, payload: { agentId: agent.id, runRevision: run.revision, title: agent.title, ...ending, ...usage } }));
    }
    return out;
  }
}

function contentOf(activities: readonly SubagentActivity[]): ToolCallContent[] {
  return activities.map((activity) => text(describe(activity)));
}

function describe(activity: SubagentActivity): string {
  switch (activity.type) {
    case "assistant":
      return activity.text;
    case "tool":
      return [`${activity.action} ${activity.subject}${activity.outcome === "succeeded" ? "" : ` (${activity.outcome})`}`, ...(activity.details ?? [])].join("\n");
    case "notice":
      return [`${activity.severity}: ${activity.title}`, ...(activity.content ?? [])].join("\n");
  }
}

const text = (value: string): ToolCallContent => ({ type: "content", content: { type: "text", text: value } });
