import { randomUUID } from "node:crypto";
import type { CompactionMode, DeltaCause, MessageRecord, Operation, Snapshot, TimelineItem } from "../../generated/tau-v18.js";
import { userText } from "./conversation.js";
import { timelineItemId } from "./patch-builder.js";

export interface CompactionPlan {
  cause: Extract<DeltaCause, { type: "compaction" }>;
  snapshot: Omit<Snapshot, "revision">;
  compactionMessage: string;
  includedLastAssistant: boolean;
}

/** True when there is user history a compaction could summarize. */
export function hasCompactableHistory(snapshot: Snapshot): boolean {
  return snapshot.messages.some((m) => m.message.role === "user");
}

/**
 * Manual compaction (spec §4.5, §5.5): the active context becomes the base prompt, a summary
 * message and — in "summary-and-last" mode — the last finished assistant reply; the timeline moves
 * to the next epoch, keeping only the compaction's operation record and the retained messages.
 * Sequences continue from the old high-water mark so item ids stay unique. Turn receipts are
 * durable and survive.
 */
export function planCompaction(snapshot: Snapshot, operation: Operation, mode: CompactionMode, guidance: string | undefined, now = Date.now()): CompactionPlan {
  const previousEpoch = snapshot.timeline.epoch;
  const epoch = previousEpoch + 1;
  const last = mode === "summary-and-last" ? lastPlainAssistant(snapshot.messages) : undefined;
  const compactionMessage = summarize(snapshot.messages, guidance);
  const summary: MessageRecord = {
    id: `msg-${randomUUID()}`,
    state: "committed",
    modelVisible: true,
    message: { role: "user", content: compactionMessage, timestamp: now },
  };
  let sequence = snapshot.timeline.sequence;
  const next = () => {
    sequence += 1;
    return { id: timelineItemId(sequence), sequence, createdAt: now };
  };
  const items: TimelineItem[] = [
    { type: "operation", operationId: operation.id, ...next() },
    { type: "message", messageId: summary.id, ...next() },
  ];
  if (last) items.push({ type: "message", messageId: last.id, ...next() });
  const { revision: _revision, ...rest } = snapshot;
  return {
    cause: { type: "compaction", previousEpoch, epoch, kind: "manual", cutType: "turn-boundary", retainedMessageCount: last ? 1 : 0 },
    snapshot: {
      ...rest,
      agentState: { revision: snapshot.agentState.revision + 1, modelContextKey: `ctx-${epoch}` },
      messages: [snapshot.messages[0], summary, ...(last ? [last] : [])],
      timeline: { epoch, sequence, items },
      tools: {},
      operations: { [operation.id]: operation },
      // Sub-agents are supervised runs, not conversation: they outlive a compaction (a running one goes on).
      agents: snapshot.agents,
      facets: {},
    },
    compactionMessage,
    includedLastAssistant: last !== undefined,
  };
}

/** The last committed assistant reply that asked for no tools (a tool call cannot outlive its result). */
function lastPlainAssistant(messages: MessageRecord[]): MessageRecord | undefined {
  for (let i = messages.length - 1; i > 0; i--) {
    const record = messages[i];
    const m = record.message;
    if (record.state !== "committed" || m.role !== "assistant" || !("stopReason" in m)) continue;
    if (m.stopReason === "error" || m.stopReason === "aborted") continue;
    return m.content.some((b) => b.type === "toolCall") ? undefined : record;
  }
  return undefined;
}

function summarize(messages: MessageRecord[], guidance: string | undefined): string {
  const requests = messages.filter((m) => m.modelVisible && m.message.role === "user").map((m) => (m.message.role === "user" ? userText(m.message) : ""));
  const lines = [`Summary of the conversation so far (${requests.length} user message${requests.length === 1 ? "" : "s"}):`];
  for (const text of requests) lines.push(`- ${text.replace(/\s+/g, " ").trim().slice(0, 200)}`);
  if (guidance?.trim()) lines.push(`Guidance: ${guidance.trim()}`);
  return lines.join("\n");
}
