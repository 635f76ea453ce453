import type { DeltaCause, Snapshot } from "../../generated/tau-v18.js";
import { userText } from "./conversation.js";

export interface RewindPlan {
  cause: Extract<DeltaCause, { type: "rewind" }>;
  snapshot: Omit<Snapshot, "revision">;
  text: string;
  removedEntryIds: string[];
}

/**
 * Rewind (spec §4.5, §5.5): removes the chosen user history entry and everything after it. The
 * epoch and the high-water mark stay (sequences are never reused); every timeline item past the
 * cutoff goes, with the tools and operations it showed, and the turn receipts of the removed
 * entries. Returns undefined when `entryId` is not a user entry of the current context.
 * `removedEntryIds` are the ids of every history entry removed (drafts and discarded messages are none).
 */
export function planRewind(snapshot: Snapshot, entryId: string, historyEntryIds: ReadonlySet<string>): RewindPlan | undefined {
  const index = snapshot.messages.findIndex((m) => m.id === entryId);
  const target = snapshot.messages[index];
  if (index <= 0 || target.message.role !== "user" || !historyEntryIds.has(entryId)) return undefined;
  const entryItem = snapshot.timeline.items.find((i) => i.type === "message" && i.messageId === entryId);
  const cutoffSequence = entryItem ? entryItem.sequence - 1 : snapshot.timeline.sequence;
  const removed = snapshot.messages.slice(index);
  // Every history entry from the target on, assistant replies and tool results too, as Tau lists them.
  const removedEntryIds = removed.filter((m) => m.state === "committed" || m.state === "interrupted").map((m) => m.id);
  const items = snapshot.timeline.items.filter((i) => i.sequence <= cutoffSequence);
  const keep = <V>(map: Record<string, V>, kept: Set<string>) => Object.fromEntries(Object.entries(map).filter(([id]) => kept.has(id)));
  const keptTools = new Set(items.flatMap((i) => (i.type === "tool" ? [i.toolId] : [])));
  const keptOperations = new Set(items.flatMap((i) => (i.type === "operation" ? [i.operationId] : [])));
  const removedEntries = new Set(removedEntryIds);
  const { revision: _revision, ...rest } = snapshot;
  return {
    cause: { type: "rewind", epoch: snapshot.timeline.epoch, cutoffSequence },
    snapshot: {
      ...rest,
      messages: snapshot.messages.slice(0, index),
      turns: Object.fromEntries(Object.entries(snapshot.turns).filter(([id]) => !removedEntries.has(id))),
      timeline: { ...snapshot.timeline, items },
      tools: keep(snapshot.tools, keptTools),
      operations: keep(snapshot.operations, keptOperations),
      facets: Object.fromEntries(Object.entries(snapshot.facets).filter(([, f]) => f.subject.type !== "tool" || keptTools.has(f.subject.id))),
      agentState: dropCheckpointInto(snapshot, index),
    },
    text: userText(target.message),
    removedEntryIds,
  };
}

/** A usage checkpoint that pointed into the removed history no longer exists. */
function dropCheckpointInto(snapshot: Snapshot, index: number): Snapshot["agentState"] {
  const checkpoint = snapshot.agentState.usageCheckpoint;
  if (!checkpoint) return snapshot.agentState;
  const kept = snapshot.messages.slice(0, index).some((m) => m.id === checkpoint.historyEntryId);
  if (kept) return snapshot.agentState;
  const { usageCheckpoint: _dropped, ...rest } = snapshot.agentState;
  return rest;
}
