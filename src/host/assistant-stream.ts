import { randomUUID } from "node:crypto";
import type { AssistantContent, AssistantMessage, StopReason, ToolCall } from "../../generated/tau-v18.js";
import { SCRIPTED_MODEL } from "./catalog.js";
import { conversationInputWords, findMessage } from "./conversation.js";
import { PatchBuilder } from "./patch-builder.js";
import { pause, throwIfAborted } from "./pause.js";
import { chunks, countWords, scriptedUsage } from "./scripted-agent.js";
import type { SessionState } from "./session-state.js";

export interface StreamEnvironment {
  state: SessionState;
  signal: AbortSignal;
  streamDelayMs: number;
}

/**
 * One assistant message of a turn as the scripted model "generates" it: a draft that text and
 * thinking stream into (`message.content.append`, 8 characters at a time), then committed as a
 * full provider-neutral AssistantMessage, or marked interrupted when the turn stops early.
 */
export class AssistantStream {
  private draftId: string | null = null;
  /** Stop reason of the last message committed in this turn. */
  lastStopReason: StopReason | null = null;

  constructor(private readonly env: StreamEnvironment) {}

  get open(): boolean {
    return this.draftId !== null;
  }

  async stream(kind: "text" | "thinking", value: string): Promise<void> {
    if (value === "") return;
    const id = this.ensureDraft();
    for (const piece of chunks(value)) {
      throwIfAborted(this.env.signal);
      this.env.state.commit({ type: "assistant-stream" }, [{ type: "message.content.append", messageId: id, [kind]: piece, timestamp: Date.now() }]);
      await pause(this.env.streamDelayMs, this.env.signal);
    }
  }

  /**
   * Commits the message (creating it if nothing was streamed) with `toolCalls` appended after the
   * streamed content. Returns its id and the content index of each tool call.
   */
  commit(stopReason: StopReason, toolCalls: ToolCall[] = [], errorMessage?: string): { messageId: string; toolCallIndexes: number[] } {
    const { state } = this.env;
    const existing = this.draftId ? this.draftContent(this.draftId) : [];
    const content: AssistantContent[] = [...existing, ...toolCalls];
    const toolCallIndexes = toolCalls.map((_, i) => existing.length + i);
    const message = this.finished(content, stopReason, errorMessage);
    const cost = message.usage.cost.total;
    const builder = new PatchBuilder(state.snapshot);
    const messageId = this.draftId ?? `msg-${randomUUID()}`;
    const record = { id: messageId, state: "committed" as const, modelVisible: true, message };
    if (this.draftId) builder.add({ type: "message.replace", message: record });
    else builder.add({ type: "message.append", message: record }).messageItem(messageId);
    builder.add({ type: "cost.set", costTotal: state.snapshot.costTotal + cost });
    state.commit({ type: "assistant-message" }, builder.changes);
    this.draftId = null;
    this.lastStopReason = stopReason;
    return { messageId, toolCallIndexes };
  }

  /** Marks an open draft as interrupted (turn aborted or failed mid-stream). */
  interrupt(stopReason: "aborted" | "error", errorMessage?: string): void {
    if (!this.draftId) return;
    const id = this.draftId;
    this.draftId = null;
    const message = this.finished(this.draftContent(id), stopReason, errorMessage);
    this.env.state.commit({ type: "assistant-message" }, [
      { type: "message.replace", message: { id, state: "interrupted", modelVisible: false, message } },
    ]);
  }

  private ensureDraft(): string {
    if (this.draftId) return this.draftId;
    const id = `msg-${randomUUID()}`;
    const { state } = this.env;
    const builder = new PatchBuilder(state.snapshot)
      .add({ type: "message.append", message: { id, state: "draft", modelVisible: false, message: { role: "assistant", content: [], timestamp: Date.now() } } })
      .messageItem(id);
    state.commit({ type: "assistant-stream" }, builder.changes);
    this.draftId = id;
    return id;
  }

  /** The draft's content exactly as the applier built it from the streamed appends. */
  private draftContent(id: string): AssistantContent[] {
    const record = findMessage(this.env.state.snapshot, id);
    return record && record.message.role === "assistant" ? [...record.message.content] : [];
  }

  private finished(content: AssistantContent[], stopReason: StopReason, errorMessage?: string): AssistantMessage {
    const replyWords = content.reduce((n, block) => n + (block.type === "text" ? countWords(block.text) : 0), 0);
    return {
      role: "assistant",
      content,
      api: SCRIPTED_MODEL.api,
      provider: SCRIPTED_MODEL.provider,
      model: SCRIPTED_MODEL.id,
      usage: scriptedUsage(conversationInputWords(this.env.state.snapshot), replyWords),
      stopReason,
      ...(errorMessage === undefined ? {} : { errorMessage }),
      timestamp: Date.now(),
    };
  }
}
