import type { Snapshot, TurnOutcome } from "../../../generated/tau-v18.js";
import { draft, type EventDraft } from "../event-draft.js";
import type { HistoryEntry, HistoryGroup } from "./session-history.js";
import { turnTotals, type TurnTotals } from "./turn-ledger.js";

/**
 * The session's history (session-history.ts) as the Ask events its turns would have produced had
 * the gateway watched them: per turn `turn.started`, its user messages (`user.message`), thinking
 * and text (`model.thinking`, `model.streaming`), tool calls (`tool.use`, and `tool.result` once
 * they ended) and, for a settled turn, its end event with the totals read from the snapshot. A
 * tool whose arguments are still streaming is not told yet (its tool.use comes live).
 */

export function groupEvents(group: HistoryGroup, snapshot: Snapshot): EventDraft[] {
  const out: EventDraft[] = [];
  const turnId = group.turn?.userHistoryEntryId;
  if (turnId !== undefined) out.push(draft("turn.started", { turnId }));
  for (const entry of group.entries) out.push(...entryEvents(entry, turnId));
  if (group.turn?.state === "settled") out.push(turnEndEvent(group.turn.userHistoryEntryId, group.turn.outcome, turnTotals(snapshot, group.turn.userHistoryEntryId)));
  return out;
}

export function entryEvents(entry: HistoryEntry, turnId: string | undefined): EventDraft[] {
  switch (entry.kind) {
    case "user":
      return [userMessageEvent(entry.messageId, turnId, entry.text)];
    case "thinking":
      return [draft("model.thinking", { delta: entry.text, messageId: entry.messageId })];
    case "text":
      return [draft("model.streaming", { delta: entry.text, messageId: entry.messageId })];
    case "tool": {
      if (entry.status === "streaming") return [];
      const { id, name, args, ending } = entry;
      const used = draft("tool.use", { id, name, args });
      return ending ? [used, draft("tool.result", { id, name, output: ending.output, isError: ending.isError, durationMs: ending.durationMs })] : [used];
    }
  }
}

export function userMessageEvent(messageId: string, turnId: string | undefined, text: string): EventDraft {
  return draft("user.message", { messageId, ...(turnId !== undefined ? { turnId } : {}), text });
}

/** The one event that ends a turn, by its outcome (Tau's blocked is reported as failed). */
export function turnEndEvent(turnId: string, outcome: TurnOutcome, totals: TurnTotals): EventDraft {
  switch (outcome.status) {
    case "completed":
      return draft("turn.completed", { turnId, ...totals });
    case "failed":
      return draft("turn.failed", { turnId, error: outcome.errorMessage ?? "the turn failed" });
    case "blocked":
      return draft("turn.failed", { turnId, error: `turn blocked (${outcome.reason}): ${outcome.message}` });
    case "aborted":
      return draft("turn.aborted", { turnId });
  }
}
