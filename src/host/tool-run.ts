import { randomUUID } from "node:crypto";
import type { DispatchedToolRun, TextContent, TextOrImageContent, ToolCall, ToolOutcome } from "../../generated/tau-v18.js";
import type { AssistantStream } from "./assistant-stream.js";
import { PatchBuilder } from "./patch-builder.js";
import type { SessionState } from "./session-state.js";

export interface ToolEnd {
  status: ToolOutcome;
  /** The model-visible tool result. */
  content: TextOrImageContent[];
  isError: boolean;
  summary?: string;
  error?: string;
  /** The result message's `details` (e.g. which sub-agent a spawn_agent call started). */
  details?: unknown;
}

/**
 * The lifecycle of one tool call inside a turn, as deltas: the assistant message that asks for it
 * is committed (stopReason toolUse), the tool run appears queued with its timeline item, turns
 * running, and ends with a toolResult message and its final status.
 */
export class ToolRunRecorder {
  private run: DispatchedToolRun;

  private constructor(
    private readonly state: SessionState,
    run: DispatchedToolRun,
  ) {
    this.run = run;
  }

  /** Commits the calling assistant message and the queued tool run. */
  static start(state: SessionState, assistant: AssistantStream, toolName: string, args: Record<string, unknown>): ToolRunRecorder {
    const id = `call_${randomUUID()}`;
    const call: ToolCall = { type: "toolCall", id, name: toolName, arguments: args };
    const { messageId, toolCallIndexes } = assistant.commit("toolUse", [call]);
    const run: DispatchedToolRun = { id, toolCallId: id, toolName, facetIds: [], status: "queued", call: { messageId, contentIndex: toolCallIndexes[0] } };
    state.commit({ type: "tool-run" }, new PatchBuilder(state.snapshot).add({ type: "tool.set", tool: run }).toolItem(id).changes);
    return new ToolRunRecorder(state, run);
  }

  get toolCallId(): string {
    return this.run.toolCallId;
  }

  running(): void {
    this.run = { ...this.run, status: "running", startedAt: Date.now() };
    this.state.commit({ type: "tool-run" }, [{ type: "tool.set", tool: this.run }]);
  }

  /** Appends the toolResult message and the final status in one patch. */
  finish(end: ToolEnd): void {
    const resultId = `msg-${randomUUID()}`;
    const now = Date.now();
    this.run = {
      ...this.run,
      status: end.status,
      finishedAt: now,
      resultMessageId: resultId,
      ...(end.summary === undefined ? {} : { summary: end.summary }),
      ...(end.error === undefined ? {} : { error: end.error }),
    };
    this.state.commit({ type: "tool-result" }, [
      {
        type: "message.append",
        message: {
          id: resultId,
          state: "committed",
          modelVisible: true,
          message: {
            role: "toolResult",
            toolCallId: this.run.toolCallId,
            toolName: this.run.toolName,
            content: end.content,
            ...(end.details === undefined ? {} : { details: end.details }),
            isError: end.isError,
            timestamp: now,
          },
        },
      },
      { type: "tool.set", tool: this.run },
    ]);
  }
}

export const textContent = (text: string): TextContent[] => [{ type: "text", text }];
