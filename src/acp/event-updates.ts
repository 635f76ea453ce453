import type { SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate } from "../../generated/acp-v1.js";
import type { Event } from "../../generated/ask-v1.0.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import type { AcpClient } from "./client-state.js";
import { beyondHeld, heldAfter, type StreamedChunk } from "../bridge/streamed-chunks.js";
import { entriesOf } from "../bridge/translation/session-history.js";
import { entryUpdates, unfinishedToolCalls } from "./history.js";
import { planEntries } from "./plan-entries.js";
import { SubagentCards } from "./subagent-cards.js";
import { presentTool } from "./tool-presentation.js";
import { usageUpdate } from "./usage.js";

/**
 * A session's event stream (the bridge core's, DESIGN §4.3) → `session/update`s for one ACP
 * connection. It remembers the tool calls it announced, so each gets one `tool_call` and then
 * only `tool_call_update`s (an editor resets a card it is told about twice), and a permission
 * request can point at the card of the call it is about. Updates a client did not opt in to
 * (notices, compaction) are left out. A user message becomes `user_message_chunk`s as session/load
 * replays it; the connection leaves out the prompts it sent itself (see SessionLink).
 */

interface KnownToolCall {
  readonly name: string;
  finished: boolean;
  /** The interaction (approval or plan) it has been linked to. */
  interactionId?: string;
}

export interface UpdateContext {
  readonly client: AcpClient;
  readonly snapshot: Snapshot | undefined;
  /** Names of the operator's command tools. */
  readonly commandTools: ReadonlySet<string>;
  /** Gateway client tools whose calls wait for a decision before running (shown as pending). */
  readonly gatedTools: ReadonlySet<string>;
}

export class EventUpdates {
  private readonly toolCalls = new Map<string, KnownToolCall>();
  /** How far into each message's text and thinking the client has been given it (`text:<id>`, `thinking:<id>`). */
  private readonly held = new Map<string, number>();
  /** The session's sub-agents, each a card of its own (subagent-cards.ts). */
  readonly subagents = new SubagentCards();

  /** A tool call the client already knows about (from a replayed history). */
  known(toolCallId: string, name: string, finished: boolean): void {
    this.toolCalls.set(toolCallId, { name, finished });
  }

  /** The client was given a message's text or thinking up to `length` (a replayed history): live chunks give only the rest. */
  given(messageId: string, kind: "text" | "thinking", length: number): void {
    this.held.set(`${kind}:${messageId}`, length);
  }

  /** A streamed chunk as the client is to get it: what it was not given yet, named after its message; none when that is nothing. */
  private chunk(
    sessionUpdate: "agent_message_chunk" | "agent_thought_chunk",
    kind: "text" | "thinking",
    payload: StreamedChunk & { messageId?: string },
  ): SessionUpdate[] {
    const { messageId } = payload;
    if (messageId === undefined) return [{ sessionUpdate, content: { type: "text", text: payload.delta } }];
    const key = `${kind}:${messageId}`;
    const held = this.held.get(key) ?? 0;
    const text = beyondHeld(held, payload);
    this.held.set(key, heldAfter(held, payload));
    return text === "" ? [] : [{ sessionUpdate, messageId, content: { type: "text", text } }];
  }

  translate(event: Event, context: UpdateContext): SessionUpdate[] {
    switch (event.type) {
      case "user.message": {
        const { messageId, text } = event.payload;
        const record = context.snapshot?.messages.find((m) => m.id === messageId);
        if (record && context.snapshot) return entriesOf(record, context.snapshot).flatMap((entry) => entryUpdates(entry, undefined, context.commandTools));
        return text ? [{ sessionUpdate: "user_message_chunk", messageId, content: { type: "text", text } }] : [];
      }
      // Named after their Tau message, as session/load's replay names them: the live rest of a replayed message is that message.
      case "model.streaming":
        return this.chunk("agent_message_chunk", "text", event.payload);
      case "model.thinking":
        return this.chunk("agent_thought_chunk", "thinking", event.payload);
      case "tool.use": {
        const { id, name, args } = event.payload;
        if (this.toolCalls.has(id)) return [];
        this.toolCalls.set(id, { name, finished: false });
        const { kind, title, locations } = presentTool(name, args, context.snapshot?.executionEnvironment.cwd, context.commandTools);
        const status: ToolCallStatus = context.gatedTools.has(name) ? "pending" : "in_progress";
        return [{ sessionUpdate: "tool_call", toolCallId: id, title, name, kind, status, ...(locations ? { locations } : {}), ...(args ? { rawInput: args } : {}) }];
      }
      case "tool.result": {
        const { id, name, output, isError } = event.payload;
        const known = this.toolCalls.get(id);
        if (known?.finished) return [];
        const status: ToolCallStatus = isError ? "failed" : "completed";
        const text = typeof output === "string" ? output : output === undefined ? "" : JSON.stringify(output);
        const content: ToolCallContent[] = text ? [{ type: "content", content: { type: "text", text } }] : [];
        const result: SessionUpdate = { sessionUpdate: "tool_call_update", toolCallId: id, status, content, rawOutput: { output, isError } };
        if (known) {
          known.finished = true;
          return [result];
        }
        // Its start was never seen (it began before this connection looked): announce it finished.
        this.toolCalls.set(id, { name, finished: true });
        const { kind, title } = presentTool(name, undefined, undefined, context.commandTools);
        return [{ sessionUpdate: "tool_call", toolCallId: id, title, name, kind, status, content, rawOutput: { output, isError } }];
      }
      case "approval.updated": {
        const call = this.linkedTo(event.payload.id);
        return call && event.payload.status === "approved" ? [{ sessionUpdate: "tool_call_update", toolCallId: call, status: "in_progress" }] : [];
      }
      case "approval.voted": {
        // A vote that did not decide: the card stays pending and says how many approvals it has.
        const call = this.linkedTo(event.payload.id);
        const { approvals, needed, approver } = event.payload;
        const text = `Approved by ${approvals} of ${needed} needed approvers (latest: ${approver}); waiting for ${needed - approvals} more.`;
        return call ? [{ sessionUpdate: "tool_call_update", toolCallId: call, status: "pending", content: [{ type: "content", content: { type: "text", text } }] }] : [];
      }
      case "plan.proposed":
        return [{ sessionUpdate: "plan", entries: planEntries(event.payload.plan) }];
      case "turn.completed":
        // A settled turn's messages stream no more: what the client holds of them need not be remembered.
        this.held.clear();
        return context.snapshot ? usageUpdate(context.snapshot) : [];
      case "turn.failed":
      case "turn.aborted":
        this.held.clear();
        return [];
      case "notice": {
        if (!context.client.takesNotices) return [];
        const { severity, title, content } = event.payload;
        return [{ sessionUpdate: "notice", severity: severity === "warn" ? "warning" : severity, title, ...(content ? { description: content.join("\n") } : {}) }];
      }
      case "error":
        return context.client.takesNotices ? [{ sessionUpdate: "notice", severity: "error", title: event.payload.error }] : [];
      case "compaction.started":
        return context.client.takesCompaction ? [{ sessionUpdate: "compaction_update", compactionId: event.payload.operationId, status: "in_progress" }] : [];
      case "compaction.completed": {
        if (!context.client.takesCompaction) return [];
        const { operationId, status, error, reason } = event.payload;
        const acpStatus = status === "succeeded" ? "completed" : status === "failed" ? "failed" : "cancelled";
        const why = error ?? reason;
        return [{ sessionUpdate: "compaction_update", compactionId: operationId, status: acpStatus, ...(why ? { error: why } : {}) }];
      }
      default:
        return this.subagents.translate(event, context.snapshot);
    }
  }

  /**
   * The tool call an interaction about `toolName` is about: the latest unfinished call of that tool
   * not yet linked to another interaction. Tau announces the call before it asks the gateway to
   * run it, so it is normally there.
   */
  link(interactionId: string, toolName: string): string | undefined {
    const candidates = [...this.toolCalls.entries()].filter(([, c]) => c.name === toolName && !c.finished && c.interactionId === undefined);
    const found = candidates[candidates.length - 1];
    if (!found) return undefined;
    found[1].interactionId = interactionId;
    return found[0];
  }

  /**
   * The card to announce for an interaction whose tool call this connection was never told about
   * (it began before the connection looked, as on session/resume): the call itself, found unfinished
   * in the conversation, so its later updates finish that card; failing that, a card of its own.
   */
  waitingCard(interactionId: string, toolName: string, title: string, context: UpdateContext): { toolCallId: string; update: SessionUpdate } {
    const call = context.snapshot && unfinishedToolCalls(context.snapshot).filter((c) => c.name === toolName && !this.toolCalls.has(c.id)).at(-1);
    if (call) {
      this.toolCalls.set(call.id, { name: toolName, finished: false, interactionId });
      const { kind, title: callTitle, locations } = presentTool(toolName, call.arguments, context.snapshot?.executionEnvironment.cwd, context.commandTools);
      const update: SessionUpdate = { sessionUpdate: "tool_call", toolCallId: call.id, title: callTitle, name: toolName, kind, status: "pending", ...(locations ? { locations } : {}), rawInput: call.arguments };
      return { toolCallId: call.id, update };
    }
    this.toolCalls.set(interactionId, { name: toolName, finished: false, interactionId });
    return { toolCallId: interactionId, update: { sessionUpdate: "tool_call", toolCallId: interactionId, title, name: toolName, kind: "other", status: "pending" } };
  }

  /**
   * The tool call a permission request is about, with the title and kind its card has, so a
   * client that shows the request on its own (as codex-acp's requests are shown) can tell what it asks.
   */
  permissionCall(toolCallId: string, toolName: string, args: Record<string, unknown> | undefined, context: UpdateContext): ToolCallUpdate {
    const { kind, title } = presentTool(toolName, args, context.snapshot?.executionEnvironment.cwd, context.commandTools);
    return { toolCallId, title, kind, status: "pending", ...(args ? { rawInput: args } : {}) };
  }

  private linkedTo(interactionId: string): string | undefined {
    for (const [id, call] of this.toolCalls) if (call.interactionId === interactionId) return id;
    return undefined;
  }
}
