import type { ThreadItem, Turn, TurnError, UserInput } from "../../generated/codex-v2.js";
import type { MessagePayload, MessageRecord, Snapshot, TurnOutcome } from "../../generated/tau-v18.js";
import { messageText, messageThinking, toolCallArguments, toolDuration, toolOutput } from "../bridge/message-content.js";
import { completedToolItem, startedToolItem, toolKind, type ToolCatalog } from "./tool-items.js";

/**
 * A thread's history read from the Tau snapshot (thread/resume from another connection, or after
 * a gateway restart; thread/read with includeTurns): each Tau turn a turn, its user message a
 * userMessage item, the assistant's thinking and text reasoning and agentMessage items, its tool
 * runs the items they are live (commands, tools, plans). Ids are Tau's, so they match nothing the
 * live stream invented, and never change between reads.
 */

/** The user's input of the turn whose user message has this id. */
export function userInputOf(snapshot: Snapshot, turnId: string): UserInput[] {
  const record = snapshot.messages.find((m) => m.id === turnId);
  return record ? userInput(record.message) : [];
}

function userInput(message: MessagePayload): UserInput[] {
  const text = messageText(message);
  return text ? [{ type: "text", text, text_elements: [] }] : [];
}

/** The first user message, shortened: what a thread list shows. */
export function preview(snapshot: Snapshot): string {
  const first = snapshot.messages.find((m) => m.message.role === "user" && m.id in snapshot.turns);
  const text = first ? messageText(first.message).trim() : "";
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

export function turnsOf(snapshot: Snapshot, catalog: ToolCatalog): Turn[] {
  const order = new Map(snapshot.messages.map((m, index) => [m.id, index]));
  const records = Object.values(snapshot.turns).sort(
    (a, b) => (order.get(a.userHistoryEntryId) ?? Number.MAX_SAFE_INTEGER) - (order.get(b.userHistoryEntryId) ?? Number.MAX_SAFE_INTEGER),
  );
  return records.map((record) => {
    const turnId = record.userHistoryEntryId;
    const items = itemsOf(snapshot, turnId, catalog);
    if (record.state === "running") return { id: turnId, items, status: "inProgress", error: null };
    return { id: turnId, items, ...outcomeOf(record.outcome) };
  });
}

function outcomeOf(outcome: TurnOutcome): Pick<Turn, "status" | "error"> {
  switch (outcome.status) {
    case "completed":
      return { status: "completed", error: null };
    case "aborted":
      return { status: "interrupted", error: null };
    case "failed":
      return { status: "failed", error: turnError(outcome.errorMessage ?? "the turn failed") };
    case "blocked":
      return { status: "failed", error: turnError(`turn blocked (${outcome.reason}): ${outcome.message}`) };
  }
}

const turnError = (message: string): TurnError => ({ message, codexErrorInfo: "other" });

/** The messages of one turn: from its user message up to the next turn's. */
function turnMessages(snapshot: Snapshot, turnId: string): MessageRecord[] {
  const start = snapshot.messages.findIndex((m) => m.id === turnId);
  if (start < 0) return [];
  const found = [snapshot.messages[start]!];
  for (const record of snapshot.messages.slice(start + 1)) {
    if (record.message.role === "user" && record.id in snapshot.turns) break;
    found.push(record);
  }
  return found;
}

function itemsOf(snapshot: Snapshot, turnId: string, catalog: ToolCatalog): ThreadItem[] {
  const items: ThreadItem[] = [];
  const cwd = snapshot.executionEnvironment.cwd;
  for (const record of turnMessages(snapshot, turnId)) {
    const { message } = record;
    if (message.role === "user") {
      items.push({ type: "userMessage", id: `${record.id}-input`, content: userInput(message) });
      continue;
    }
    if (message.role !== "assistant" || record.state === "discarded") continue;
    const thinking = messageThinking(message);
    if (thinking) items.push({ type: "reasoning", id: `${record.id}-reasoning`, summary: [thinking], content: [] });
    const text = messageText(message);
    if (text) items.push({ type: "agentMessage", id: record.id, text });
    for (const block of message.content) {
      if (block.type !== "toolCall") continue;
      const tool = snapshot.tools[block.id];
      if (!tool || tool.status === "streaming") continue;
      const args = toolCallArguments(tool.call, snapshot);
      const kind = toolKind(tool.toolName, args, catalog);
      const started = startedToolItem(tool.id, tool.toolName, args, kind, cwd);
      if (!started) continue;
      const finished = tool.status === "succeeded" || tool.status === "failed" || tool.status === "blocked" || tool.status === "cancelled";
      items.push(finished ? completedToolItem(started, { output: toolOutput(tool, snapshot), isError: tool.status !== "succeeded", durationMs: toolDuration(tool) }) : started);
    }
  }
  return items;
}
