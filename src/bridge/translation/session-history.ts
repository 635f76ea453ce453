import type { MessageRecord, Snapshot, TextOrImageContent, ToolRun, TurnRecord } from "../../../generated/tau-v18.js";
import { messageText, toolDuration, toolOutput } from "../message-content.js";

/**
 * A session's conversation read from its Tau snapshot alone, in no dialect's words: what every
 * dialect shows as history for turns the gateway did not watch (a session another Tau client
 * worked, everything before a gateway restart) and what Codex `thread/read` and ACP `session/load`
 * show always. Ask rebuilds its event log from it, Codex its turns and items, ACP its replayed
 * updates, so all three tell the same conversation.
 *
 * Tau's turn records carry only outcomes; a turn's messages are those from its user message (whose
 * id is the turn id) up to the next turn's. Turns whose messages are gone (compacted away) come
 * first, without entries: compaction removes the oldest messages. Messages before the first turn
 * still in the conversation (a compaction summary, a message recorded without a turn) form a group
 * of no turn. Discarded drafts, system messages and tool results (they belong to their call) are
 * not entries.
 */

interface EntryBase {
  /** The Tau message the entry comes from. */
  readonly messageId: string;
}

export interface UserEntry extends EntryBase {
  readonly kind: "user";
  readonly content: TextOrImageContent[];
  /** The text blocks joined. */
  readonly text: string;
}

export interface ThinkingEntry extends EntryBase {
  readonly kind: "thinking";
  readonly text: string;
}

export interface TextEntry extends EntryBase {
  readonly kind: "text";
  readonly text: string;
}

/** How a finished tool call ended. */
export interface ToolEnding {
  readonly output: string;
  readonly isError: boolean;
  readonly durationMs: number | null;
}

export interface ToolEntry extends EntryBase {
  readonly kind: "tool";
  /** Tau's tool call id. */
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
  /** The run's status; without a run, from its result message (or `running` with none). */
  readonly status: ToolRun["status"];
  /** Set once the call has ended (succeeded, failed, blocked or cancelled). */
  readonly ending: ToolEnding | undefined;
}

export type HistoryEntry = UserEntry | ThinkingEntry | TextEntry | ToolEntry;

export interface HistoryGroup {
  /** The turn the entries belong to; undefined for messages before the first turn. */
  readonly turn: TurnRecord | undefined;
  readonly entries: HistoryEntry[];
}

const ENDED: Record<ToolRun["status"], boolean> = {
  streaming: false,
  queued: false,
  running: false,
  succeeded: true,
  failed: true,
  blocked: true,
  cancelled: true,
};

/** Whether a tool status is final. */
export const toolEnded = (status: ToolRun["status"]): boolean => ENDED[status];

/** The conversation, grouped by turn, in order (see the module comment). */
export function sessionHistory(snapshot: Snapshot): HistoryGroup[] {
  const position = new Map(snapshot.messages.map((record, index) => [record.id, index]));
  const turns = Object.values(snapshot.turns);
  const gone = turns.filter((turn) => !position.has(turn.userHistoryEntryId));
  const groups: HistoryGroup[] = gone.map((turn) => ({ turn, entries: [] }));
  const results = toolResults(snapshot);
  let current: HistoryGroup | undefined;
  for (const record of snapshot.messages) {
    const turn = record.message.role === "user" ? snapshot.turns[record.id] : undefined;
    if (turn || !current) groups.push((current = { turn, entries: [] }));
    current.entries.push(...entriesOf(record, snapshot, results));
  }
  return groups.filter((group) => group.turn !== undefined || group.entries.length > 0);
}

/** Every entry of the conversation, in order, whatever turn it belongs to. */
export function historyEntries(snapshot: Snapshot): HistoryEntry[] {
  return sessionHistory(snapshot).flatMap((group) => group.entries);
}

/** The entries one message contributes. */
export function entriesOf(record: MessageRecord, snapshot: Snapshot, results = toolResults(snapshot)): HistoryEntry[] {
  const { message } = record;
  const messageId = record.id;
  if (record.state === "discarded") return [];
  if (message.role === "user") {
    const content: TextOrImageContent[] = typeof message.content === "string" ? (message.content ? [{ type: "text", text: message.content }] : []) : message.content;
    return [{ kind: "user", messageId, content, text: messageText(message) }];
  }
  if (message.role !== "assistant") return [];
  const entries: HistoryEntry[] = [];
  for (const block of message.content) {
    if (block.type === "thinking") {
      if (block.thinking) entries.push({ kind: "thinking", messageId, text: block.thinking });
    } else if (block.type === "text") {
      if (block.text) entries.push({ kind: "text", messageId, text: block.text });
    } else {
      const run = snapshot.tools[block.id];
      const result = results.get(block.id);
      const status: ToolRun["status"] = run?.status ?? (result ? (result.isError ? "failed" : "succeeded") : "running");
      let ending: ToolEnding | undefined;
      if (run && run.status !== "streaming" && toolEnded(run.status)) {
        ending = { output: toolOutput(run, snapshot), isError: run.status !== "succeeded", durationMs: toolDuration(run) };
      } else if (!run && result) {
        ending = { output: messageText(result), isError: result.isError, durationMs: null };
      }
      entries.push({ kind: "tool", messageId, id: block.id, name: block.name, args: block.arguments, status, ending });
    }
  }
  return entries;
}

type ToolResultPayload = Extract<MessageRecord["message"], { role: "toolResult" }>;

function toolResults(snapshot: Snapshot): Map<string, ToolResultPayload> {
  const results = new Map<string, ToolResultPayload>();
  for (const { message } of snapshot.messages) if (message.role === "toolResult") results.set(message.toolCallId, message);
  return results;
}
