import type { ContentBlock, SessionUpdate, ToolCallStatus } from "../../generated/acp-v1.js";
import type { Snapshot, TextOrImageContent, ToolCall, ToolRun } from "../../generated/tau-v18.js";
import { historyEntries, type HistoryEntry, type ToolEntry } from "../bridge/translation/session-history.js";
import { presentTool } from "./tool-presentation.js";

/**
 * A session's conversation as the `session/update`s session/load replays (protocol §5), from the
 * bridge core's dialect-neutral history (session-history.ts), so it holds every turn, whoever ran
 * it and whether or not the gateway watched it: user messages as `user_message_chunk`, assistant
 * text and thinking as `agent_message_chunk` and `agent_thought_chunk`, and each tool call once,
 * as a `tool_call` with its final status and output. Chunks carry their Tau message id as
 * `messageId`, and how much of each message's text and thinking the replay gave is told (live
 * chunks give only the rest).
 */

export interface ReplayedToolCall {
  id: string;
  name: string;
  finished: boolean;
}

/** How much of a message's text or thinking the replay gave. */
export interface ReplayedText {
  messageId: string;
  kind: "text" | "thinking";
  length: number;
}

export interface Replay {
  updates: SessionUpdate[];
  toolCalls: ReplayedToolCall[];
  texts: ReplayedText[];
}

/** A dispatched tool run's status as ACP shows it; a call still running is in progress. */
const STATUS: Record<ToolRun["status"], ToolCallStatus> = {
  streaming: "pending",
  queued: "pending",
  running: "in_progress",
  succeeded: "completed",
  failed: "failed",
  blocked: "failed",
  cancelled: "failed",
};

export function replayHistory(snapshot: Snapshot, commandTools: ReadonlySet<string>): Replay {
  const updates: SessionUpdate[] = [];
  const toolCalls: ReplayedToolCall[] = [];
  const cwd = snapshot.executionEnvironment.cwd;
  const given = new Map<string, ReplayedText>();
  for (const entry of historyEntries(snapshot)) {
    updates.push(...entryUpdates(entry, cwd, commandTools));
    if (entry.kind === "tool") {
      const status = STATUS[entry.status];
      toolCalls.push({ id: entry.id, name: entry.name, finished: status === "completed" || status === "failed" });
    } else if (entry.kind === "text" || entry.kind === "thinking") {
      const key = `${entry.kind}:${entry.messageId}`;
      const text = given.get(key) ?? { messageId: entry.messageId, kind: entry.kind, length: 0 };
      text.length += entry.text.length;
      given.set(key, text);
    }
  }
  return { updates, toolCalls, texts: [...given.values()] };
}

/** What one history entry is as updates (a user message is one chunk per content block). */
export function entryUpdates(entry: HistoryEntry, cwd: string | undefined, commandTools: ReadonlySet<string>): SessionUpdate[] {
  const { messageId } = entry;
  switch (entry.kind) {
    case "user":
      return blocks(entry.content).map((content): SessionUpdate => ({ sessionUpdate: "user_message_chunk", messageId, content }));
    case "thinking":
      return [{ sessionUpdate: "agent_thought_chunk", messageId, content: { type: "text", text: entry.text } }];
    case "text":
      return [{ sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text: entry.text } }];
    case "tool":
      return [toolCallUpdate(entry, cwd, commandTools)];
  }
}

function toolCallUpdate(entry: ToolEntry, cwd: string | undefined, commandTools: ReadonlySet<string>): SessionUpdate {
  const { kind, title, locations } = presentTool(entry.name, entry.args, cwd, commandTools);
  const { ending } = entry;
  return {
    sessionUpdate: "tool_call",
    toolCallId: entry.id,
    title,
    name: entry.name,
    kind,
    status: STATUS[entry.status],
    rawInput: entry.args,
    ...(locations ? { locations } : {}),
    ...(ending?.output ? { content: [{ type: "content", content: { type: "text", text: ending.output } }] } : {}),
    ...(ending ? { rawOutput: { output: ending.output, isError: ending.isError } } : {}),
  };
}

/** The conversation's tool calls that have no final status yet (a call waiting for a decision among them), oldest first. */
export function unfinishedToolCalls(snapshot: Snapshot): ToolCall[] {
  return historyEntries(snapshot).flatMap((entry): ToolCall[] => {
    if (entry.kind !== "tool") return [];
    const status = STATUS[entry.status];
    if (status === "completed" || status === "failed") return [];
    return [{ type: "toolCall", id: entry.id, name: entry.name, arguments: entry.args }];
  });
}

function blocks(content: TextOrImageContent[]): ContentBlock[] {
  return content.flatMap((block): ContentBlock[] => {
    if (block.type === "text") return block.text ? [{ type: "text", text: block.text }] : [];
    return [{ type: "image", data: block.data, mimeType: block.mimeType }];
  });
}
