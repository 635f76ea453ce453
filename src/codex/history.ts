import type { ThreadItem, Turn, TurnError, UserInput } from "../../generated/codex-v2.js";
import type { MessagePayload, Snapshot, TurnOutcome } from "../../generated/tau-v18.js";
import { messageText } from "../bridge/message-content.js";
import { sessionHistory, type HistoryEntry } from "../bridge/translation/session-history.js";
import { textItemId } from "./text-items.js";
import { activityItem, agentsOfCall, endKind } from "./subagent-items.js";
import { completedToolItem, startedToolItem, toolKind, type ToolCatalog } from "./tool-items.js";

/**
 * A thread's history read from the Tau snapshot (thread/resume, thread/read with includeTurns),
 * through the bridge core's dialect-neutral history (session-history.ts), so it holds every turn
 * the session had, whoever ran it and whether or not the gateway watched it: each Tau turn a turn,
 * its user messages userMessage items, the assistant's thinking and text reasoning and
 * agentMessage items, its tool runs the items they are live (commands, tools, plans). Ids are
 * Tau's and never change between reads; a message's text items have the ids the live stream gives
 * them (text-items.ts), so a message still being written goes on live under the id its history
 * item has.
 */

/** The user's input of the turn whose user message has this id. */
export function userInputOf(snapshot: Snapshot, turnId: string): UserInput[] {
  const record = snapshot.messages.find((m) => m.id === turnId);
  return record ? userInput(messageText(record.message as MessagePayload)) : [];
}

/** A user message's text as Codex input. */
export function userInput(text: string): UserInput[] {
  return text ? [{ type: "text", text, text_elements: [] }] : [];
}

/** The first user message, shortened: what a thread list shows. */
export function preview(snapshot: Snapshot): string {
  const first = snapshot.messages.find((m) => m.message.role === "user" && m.id in snapshot.turns);
  const text = first ? messageText(first.message).trim() : "";
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

export function turnsOf(snapshot: Snapshot, catalog: ToolCatalog): Turn[] {
  return sessionHistory(snapshot).flatMap((group) => {
    const record = group.turn;
    if (!record) return []; // messages before the first turn belong to none
    const turnId = record.userHistoryEntryId;
    const items = itemsOf(group.entries, snapshot, catalog);
    if (record.state === "running") return [{ id: turnId, items, status: "inProgress", error: null }];
    return [{ id: turnId, items, ...outcomeOf(record.outcome) }];
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

/**
 * A turn's items: per assistant message its thinking as one reasoning item and its text as one
 * agentMessage item (ids derived from the message's), then its tool calls.
 */
function itemsOf(entries: HistoryEntry[], snapshot: Snapshot, catalog: ToolCatalog): ThreadItem[] {
  const cwd = snapshot.executionEnvironment.cwd;
  const items: ThreadItem[] = [];
  const byMessage = new Map<string, HistoryEntry[]>();
  for (const entry of entries) {
    const list = byMessage.get(entry.messageId);
    if (list) list.push(entry);
    else byMessage.set(entry.messageId, [entry]);
  }
  for (const [messageId, ofMessage] of byMessage) {
    const first = ofMessage[0]!;
    if (first.kind === "user") {
      items.push({ type: "userMessage", id: `${messageId}-input`, content: userInput(first.text) });
      continue;
    }
    const thinking = ofMessage.flatMap((e) => (e.kind === "thinking" ? [e.text] : [])).join("");
    if (thinking) items.push({ type: "reasoning", id: textItemId(messageId, "reasoning"), summary: [thinking], content: [] });
    const text = ofMessage.flatMap((e) => (e.kind === "text" ? [e.text] : [])).join("");
    if (text) items.push({ type: "agentMessage", id: textItemId(messageId, "agentMessage"), text });
    for (const entry of ofMessage) {
      if (entry.kind !== "tool" || entry.status === "streaming") continue;
      const started = startedToolItem(entry.id, entry.name, entry.args, toolKind(entry.name, entry.args, catalog), cwd, snapshot.sessionId);
      if (!started) continue;
      const agents = started.type === "collabAgentToolCall" ? agentsOfCall(snapshot, entry.id) : [];
      items.push(entry.ending ? completedToolItem(started, { ...entry.ending, agents }) : started);
      // A sub-agent's start follows the call that spawned it; its end, the wait that saw it end (as live).
      if (started.type !== "collabAgentToolCall" || !entry.ending) continue;
      if (started.tool === "spawnAgent") items.push(...agents.map((agent) => activityItem(agent, "started")));
      if (started.tool === "wait") items.push(...agents.filter((a) => a.status !== "running").map((agent) => activityItem(agent, endKind(agent))));
    }
  }
  return items;
}
