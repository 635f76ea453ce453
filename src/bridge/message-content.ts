import type {
  AssistantContent,
  DispatchedToolRun,
  MessagePayload,
  MessageRecord,
  Snapshot,
  TextContent,
  TextOrImageContent,
  ThinkingContent,
  ToolPosition,
} from "../../generated/tau-v18.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * Reading text out of Tau's provider-neutral messages (spec §5.2–§5.3) for Ask events, which
 * carry plain strings.
 */

type Block = TextOrImageContent | AssistantContent;

function blocksOf(payload: MessagePayload): Block[] {
  return typeof payload.content === "string" ? [{ type: "text", text: payload.content }] : payload.content;
}

/** Concatenated text blocks of a message (the streamed `text` goes into the first one). */
export function messageText(payload: MessagePayload): string {
  return blocksOf(payload)
    .filter((b): b is TextContent => b.type === "text")
    .map((b) => b.text)
    .join("");
}

/** Concatenated thinking blocks of an assistant message. */
export function messageThinking(payload: MessagePayload): string {
  return blocksOf(payload)
    .filter((b): b is ThinkingContent => b.type === "thinking")
    .map((b) => b.thinking)
    .join("");
}

/** Token usage and cost of a finished assistant message; drafts have none. */
export function messageUsage(record: MessageRecord): { input: number; output: number; cost: number } | undefined {
  const payload = record.message;
  if (payload.role !== "assistant" || !("usage" in payload)) return undefined;
  return { input: payload.usage.input, output: payload.usage.output, cost: payload.usage.cost.total };
}

export function findMessage(snapshot: Snapshot, id: string): MessageRecord | undefined {
  return snapshot.messages.find((m) => m.id === id);
}

/** The arguments of the `toolCall` block a tool run points at, looked up in the given snapshots in order. */
export function toolCallArguments(position: ToolPosition, ...snapshots: Snapshot[]): Record<string, unknown> | undefined {
  for (const snapshot of snapshots) {
    const record = findMessage(snapshot, position.messageId);
    if (!record || typeof record.message.content === "string") continue;
    const block: Block | undefined = record.message.content[position.contentIndex];
    if (block?.type === "toolCall" && isObject(block.arguments)) return block.arguments;
  }
  return undefined;
}

/** What a finished tool produced: the text of its result message, else its error or summary. */
export function toolOutput(tool: DispatchedToolRun, ...snapshots: Snapshot[]): string {
  if (tool.resultMessageId !== undefined) {
    for (const snapshot of snapshots) {
      const record = findMessage(snapshot, tool.resultMessageId);
      if (record) return messageText(record.message);
    }
  }
  return tool.error ?? tool.summary ?? "";
}

/** Whole milliseconds between start and finish, or null when either is unknown. */
export function toolDuration(tool: DispatchedToolRun): number | null {
  if (tool.startedAt === undefined || tool.finishedAt === undefined) return null;
  return Math.max(0, Math.round(tool.finishedAt - tool.startedAt));
}
