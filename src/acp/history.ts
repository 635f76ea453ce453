import type { ContentBlock, SessionUpdate, ToolCallStatus } from "../../generated/acp-v1.js";
import type { MessageRecord, Snapshot, TextOrImageContent, ToolCall, ToolResultMessage } from "../../generated/tau-v18.js";
import { presentTool } from "./tool-presentation.js";

/**
 * A session's conversation as the `session/update`s session/load replays (protocol §5): user
 * messages as `user_message_chunk`, assistant text and thinking as `agent_message_chunk` and
 * `agent_thought_chunk`, and each tool call once, as a `tool_call` with its final status and
 * output. Chunks carry their Tau message id as `messageId`. Discarded drafts and system messages
 * are not part of the conversation.
 */

export interface ReplayedToolCall {
  id: string;
  name: string;
  finished: boolean;
}

export interface Replay {
  updates: SessionUpdate[];
  toolCalls: ReplayedToolCall[];
}

/** A dispatched tool run's status as ACP shows it; a call still running is in progress. */
const STATUS: Record<string, ToolCallStatus> = {
  streaming: "pending",
  queued: "pending",
  running: "in_progress",
  succeeded: "completed",
  failed: "failed",
  blocked: "failed",
  cancelled: "failed",
};

export function replayHistory(snapshot: Snapshot, commandTools: ReadonlySet<string>): Replay {
  const results = toolResults(snapshot);
  const updates: SessionUpdate[] = [];
  const toolCalls: ReplayedToolCall[] = [];
  const cwd = snapshot.executionEnvironment.cwd;

  for (const record of snapshot.messages) {
    const { message } = record;
    if (record.state === "discarded") continue;
    if (message.role === "user") {
      for (const block of blocks(message.content)) updates.push({ sessionUpdate: "user_message_chunk", messageId: record.id, content: block });
      continue;
    }
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type === "thinking") {
        if (block.thinking) updates.push({ sessionUpdate: "agent_thought_chunk", messageId: record.id, content: { type: "text", text: block.thinking } });
      } else if (block.type === "text") {
        if (block.text) updates.push({ sessionUpdate: "agent_message_chunk", messageId: record.id, content: { type: "text", text: block.text } });
      } else {
        const result = results.get(block.id);
        const status = toolCallStatus(snapshot, block.id, result);
        const { kind, title, locations } = presentTool(block.name, block.arguments, cwd, commandTools);
        const output = result ? textOf(result.content) : undefined;
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: block.id,
          title,
          name: block.name,
          kind,
          status,
          rawInput: block.arguments,
          ...(locations ? { locations } : {}),
          ...(output ? { content: [{ type: "content", content: { type: "text", text: output } }] } : {}),
          ...(result ? { rawOutput: { output: output ?? "", isError: result.isError } } : {}),
        });
        toolCalls.push({ id: block.id, name: block.name, finished: status === "completed" || status === "failed" });
      }
    }
  }
  return { updates, toolCalls };
}

/** The conversation's tool calls that have no final status yet (a call waiting for a decision among them), oldest first. */
export function unfinishedToolCalls(snapshot: Snapshot): ToolCall[] {
  const results = toolResults(snapshot);
  return snapshot.messages.flatMap((record) => {
    const { message } = record;
    if (record.state === "discarded" || message.role !== "assistant") return [];
    return message.content.filter((block): block is ToolCall => {
      if (block.type !== "toolCall") return false;
      const status = toolCallStatus(snapshot, block.id, results.get(block.id));
      return status !== "completed" && status !== "failed";
    });
  });
}

function toolResults(snapshot: Snapshot): Map<string, ToolResultMessage> {
  const results = new Map<string, ToolResultMessage>();
  for (const { message } of snapshot.messages) if (message.role === "toolResult") results.set(message.toolCallId, message);
  return results;
}

function toolCallStatus(snapshot: Snapshot, toolCallId: string, result: ToolResultMessage | undefined): ToolCallStatus {
  const run = snapshot.tools[toolCallId];
  return STATUS[run?.status ?? (result ? (result.isError ? "failed" : "succeeded") : "running")]!;
}

function blocks(content: MessageRecord["message"]["content"]): ContentBlock[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  return (content as TextOrImageContent[]).flatMap((block): ContentBlock[] => {
    if (block.type === "text") return block.text ? [{ type: "text", text: block.text }] : [];
    return [{ type: "image", data: block.data, mimeType: block.mimeType }];
  });
}

function textOf(content: TextOrImageContent[]): string {
  return content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
}
