import type { AssistantMessage, Change, Snapshot } from "../../generated/tau-v18.js";
import { SCRIPTED_MODEL } from "./catalog.js";
import { scriptedUsage } from "./scripted-agent.js";

/**
 * What a restarted host changes in a persisted snapshot (spec §9 "Recovery"): the session comes
 * back idle, accepted-but-unfinished turns settle as aborted, running maintenance becomes
 * cancelled ("session-recovered"), half-streamed messages are interrupted and unfinished tool runs
 * cancelled. Returned as changes so they are applied like any other patch.
 */
export function recoveryChanges(snapshot: Snapshot, now = Date.now()): Change[] {
  const changes: Change[] = [];
  if (snapshot.lifecycle !== "idle") changes.push({ type: "lifecycle.set", lifecycle: "idle" });
  for (const turn of Object.values(snapshot.turns)) {
    if (turn.state === "running") {
      changes.push({ type: "turn.set", turn: { userHistoryEntryId: turn.userHistoryEntryId, state: "settled", outcome: { status: "aborted", stopReason: "aborted" } } });
    }
  }
  for (const operation of Object.values(snapshot.operations)) {
    if (operation.status === "running") {
      changes.push({ type: "operation.set", operation: { id: operation.id, kind: operation.kind, startedAt: operation.startedAt, status: "cancelled", finishedAt: now, reason: "session-recovered" } });
    }
  }
  for (const record of snapshot.messages) {
    if (record.state !== "draft" || record.message.role !== "assistant") continue;
    const message: AssistantMessage = {
      role: "assistant",
      content: record.message.content,
      api: SCRIPTED_MODEL.api,
      provider: SCRIPTED_MODEL.provider,
      model: SCRIPTED_MODEL.id,
      usage: scriptedUsage(0, 0),
      stopReason: "aborted",
      timestamp: record.message.timestamp,
    };
    changes.push({ type: "message.replace", message: { id: record.id, state: "interrupted", modelVisible: false, message } });
  }
  for (const tool of Object.values(snapshot.tools)) {
    if (tool.status === "streaming") {
      const item = snapshot.timeline.items.find((i) => i.type === "tool" && i.toolId === tool.id);
      if (item) changes.push({ type: "timeline.remove", id: item.id });
      changes.push({ type: "tool.remove", id: tool.id });
    } else if (tool.status === "queued" || tool.status === "running") {
      changes.push({ type: "tool.set", tool: { ...tool, status: "cancelled", finishedAt: now, error: "the host restarted" } });
    }
  }
  for (const agent of Object.values(snapshot.agents)) {
    if (agent.run.status === "running") {
      changes.push({
        type: "agent.set",
        agent: {
          ...agent,
          availability: "idle",
          run: { revision: agent.run.revision, startedAt: agent.run.startedAt, interruptRequested: agent.run.interruptRequested, status: "interrupted", finishedAt: now, failure: { kind: "interrupted", message: "the host restarted" } },
        },
      });
    }
  }
  return changes;
}
