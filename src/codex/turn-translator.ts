import { randomUUID } from "node:crypto";
import type { Event } from "../../generated/ask-v1.0.js";
import type { ThreadActiveFlag, ThreadItem, ThreadStatus, Turn, TurnError } from "../../generated/codex-v2.js";
import { beyondHeld, heldAfter, type StreamedChunk } from "../bridge/streamed-chunks.js";
import { textItemId, type OpenTextItem, type TextItemType } from "./text-items.js";
import { completedToolItem, startedToolItem, toolKind, type ThreadItemContent } from "./tool-items.js";
import { userInput } from "./history.js";
import { planSteps } from "./plan-steps.js";
import { runningTurn } from "./running-turn.js";
import { addUsage, endedTurn, zeroUsage } from "./ended-turn.js";
import type { TranslatorHost } from "./translator-host.js";

/**
 * A session's event stream (the hub's log: turns, streamed text and thinking, tools, the gateway's
 * interactions) as Codex notifications for one thread (spec §10): each turn gets turn/started, its
 * user message, its items one after another — item/started with a complete skeleton, the deltas
 * with that item's id, item/completed with the final item — the token usage, and turn/completed
 * last, exactly once (the hub's translator already guarantees one end per turn, across upstream
 * restarts too). The thread's status follows what the turn waits for.
 *
 * A message's text and thinking are items named after the Tau message (text-items.ts), as the
 * thread's history names them: a connection that resumed the thread mid-message gets the rest as
 * deltas of the item its history holds, and that item's item/completed with the whole text.
 *
 * A command that asks for approval starts only once the thread waits on it, as in Codex (spec
 * §10.5: status `[waitingOnApproval]`, then item/started, then the request). Tau reports the tool
 * before the gateway has decided whether its call asks (the call reaches the bridge afterwards, on
 * another connection), so the item of a command tool whose call may ask is held back — its
 * item/started and everything after it — until the decision shows: the approval announced, a
 * decision made without asking, a gating that no longer asks, the tool's result, or the turn's end.
 */

interface OpenTurn {
  readonly id: string;
  readonly startedAt: number;
  /** What the turn waits for, counted (several approvals may wait at once). */
  readonly waiting: Map<ThreadActiveFlag, number>;
  /** The turn's last agent message so far: turn/completed carries it as the turn's summary, as Codex does. */
  lastAgentMessage?: ThreadItem;
}

interface TextItem {
  readonly id: string;
  readonly type: TextItemType;
  /** The Tau message it belongs to (undefined: a chunk that named none). */
  readonly messageId: string | undefined;
  text: string;
  /** How far into the message's text (or thinking) the item goes: later chunks give only what lies beyond. */
  held: number;
}

interface ToolItem {
  readonly name: string;
  readonly item: ThreadItem;
  /** Linked to an approval or a dynamic-tool call already (a second one takes the next item). */
  claimed: boolean;
  declined: boolean;
  /** Not started yet: whether its call asks for approval is not known (see the class comment). */
  held: boolean;
  /** Declined while its approval was awaited: the thread stops waiting once the item has completed. */
  endsApprovalWait?: boolean;
  contentItems?: ThreadItemContent;
}

/** A tool's output as the text items carry (the bridge reports text; anything else as JSON). */
const outputText = (output: unknown): string => (typeof output === "string" ? output : output === undefined ? "" : JSON.stringify(output));

export class TurnTranslator {
  private turn: OpenTurn | undefined;
  private text: TextItem | undefined;
  /** Ids of the text items the open turn has had (a message that returns to a kind gets a new one). */
  private readonly textIds = new Set<string>();
  /** Tool items by Tau tool id, while their turn runs. */
  private readonly tools = new Map<string, ToolItem>();
  /** Approval interaction id → the command item it decides. */
  private readonly approvals = new Map<string, string>();
  private readonly total = zeroUsage();
  private lastStatus: ThreadStatus["type"] | undefined;
  private failed = false;

  constructor(private readonly host: TranslatorHost) {}

  /**
   * A turn already running when the thread was loaded: its end is reported, its start was not
   * seen. The item it is streaming (`open`, as the session has it so far) goes on with the rest.
   */
  adoptRunningTurn(turnId: string, open?: OpenTextItem): void {
    this.turn ??= { id: turnId, startedAt: Date.now(), waiting: new Map() };
    this.lastStatus = "active";
    if (open && !this.text) {
      const id = textItemId(open.messageId, open.type);
      // The message's thinking, when its text is under way, is an item of the history already.
      if (open.type === "agentMessage") this.textIds.add(textItemId(open.messageId, "reasoning"));
      this.textIds.add(id);
      this.text = { id, type: open.type, messageId: open.messageId, text: open.text, held: open.text.length };
    }
  }

  get currentTurnId(): string | undefined {
    return this.turn?.id;
  }

  /** The text item the running turn is streaming, as the thread's connections have been told it so far. */
  get streamingItem(): { readonly turnId: string; readonly id: string; readonly text: string } | undefined {
    return this.turn && this.text ? { turnId: this.turn.id, id: this.text.id, text: this.text.text } : undefined;
  }

  /** The thread's status as the notifications have reported it. */
  get status(): ThreadStatus {
    if (this.turn) return { type: "active", activeFlags: [...this.turn.waiting.keys()] };
    return this.failed ? { type: "systemError" } : { type: "idle" };
  }

  /** The command item an approval interaction decides (linked when the approval was announced). */
  approvalItem(approvalId: string): ThreadItem | undefined {
    const id = this.approvals.get(approvalId);
    return id === undefined ? undefined : this.tools.get(id)?.item;
  }

  /** Claims the oldest started item of a dynamic tool not yet called: the item a call of that tool belongs to. */
  claimDynamicItem(toolName: string): ThreadItem | undefined {
    const tool = [...this.tools.values()].find((t) => t.name === toolName && t.item.type === "dynamicToolCall" && !t.claimed);
    if (!tool) return undefined;
    tool.claimed = true;
    return tool.item;
  }

  /** The session's gating changed (mode): held commands whose calls no longer may ask start. */
  gatingChanged(): void {
    this.releaseHeld((tool) => !this.host.mayAsk(tool.name));
  }

  /** What the client answered a dynamic tool call with, for the item's completion. */
  recordContentItems(itemId: string, contentItems: ThreadItemContent): void {
    const tool = this.tools.get(itemId);
    if (tool) tool.contentItems = contentItems;
  }

  event(event: Event): void {
    switch (event.type) {
      case "turn.started":
        return this.startTurn(event.payload.turnId);
      case "user.message":
        return this.userMessage(event.payload.messageId, event.payload.text);
      case "model.thinking":
        return this.stream("reasoning", event.payload);
      case "model.streaming":
        return this.stream("agentMessage", event.payload);
      case "tool.use":
        return this.toolStarted(event.payload.id, event.payload.name, event.payload.args);
      case "tool.result":
        return this.toolFinished(event.payload.id, { output: outputText(event.payload.output), isError: event.payload.isError, durationMs: event.payload.durationMs ?? null });
      case "approval.required": {
        const tool = event.payload.toolName === undefined ? undefined : this.linkApproval(event.payload.id, event.payload.toolName);
        this.wait("waitingOnApproval", +1);
        // The thread waits on the approval first, then the command item starts, as in Codex.
        if (tool) this.release(tool);
        return;
      }
      case "approval.updated":
        // Decided without asking (a tool granted for the session): a command held for it may start.
        if (event.payload.status === "approved" && !this.approvals.has(event.payload.id)) this.releaseDecidedUnasked();
        // A declined command completes (declined) before the thread stops waiting on it, as in Codex.
        if (event.payload.status !== "approved" && this.decline(event.payload.id)) return;
        return this.wait("waitingOnApproval", -1);
      case "input.requested":
        return this.wait("waitingOnUserInput", +1);
      case "input.resolved":
        return this.wait("waitingOnUserInput", -1);
      // A proposed plan is put to the clients as a question (plan-questions.ts): the thread waits on user input until it is decided.
      case "plan.proposed":
        return this.wait("waitingOnUserInput", +1);
      case "plan.approved":
      case "plan.rejected":
        return event.payload.id === undefined ? undefined : this.wait("waitingOnUserInput", -1);
      case "turn.completed":
        // The gateway's own translator always names the turn; an anonymous end belongs to the open turn.
        return this.endTurn(event.payload.turnId ?? this.turn?.id, "completed", undefined, {
          inputTokens: event.payload.inputTokens ?? 0,
          outputTokens: event.payload.outputTokens ?? 0,
        });
      case "turn.failed":
        return this.endTurn(event.payload.turnId, "failed", { message: event.payload.error, codexErrorInfo: "other" });
      case "turn.aborted":
        return this.endTurn(event.payload.turnId, "interrupted");
      default:
        return; // session lifecycle, queue, notices, compaction: nothing a Codex turn reports
    }
  }

  private startTurn(turnId: string): void {
    if (this.turn?.id === turnId) return;
    this.turn = { id: turnId, startedAt: Date.now(), waiting: new Map() };
    this.textIds.clear();
    this.failed = false;
    this.reportStatus();
    const { threadId } = this.host;
    this.host.emit("turn/started", { threadId, turn: runningTurn(turnId, this.turn.startedAt) });
    const userMessage: ThreadItem = { type: "userMessage", id: `${turnId}-input`, content: this.host.userInput(turnId) };
    this.itemStarted(userMessage);
    this.itemCompleted(userMessage);
  }

  /**
   * A user message added to the running turn (steered in by any client, this one included, as
   * Codex echoes steered input): a userMessage item of its own. A turn's first prompt already
   * came with turn/started.
   */
  private userMessage(messageId: string, text: string): void {
    if (!this.turn || messageId === this.turn.id) return;
    this.closeText();
    const item: ThreadItem = { type: "userMessage", id: `${messageId}-input`, content: userInput(text) };
    this.itemStarted(item);
    this.itemCompleted(item);
  }

  private stream(type: TextItemType, chunk: StreamedChunk & { messageId?: string }): void {
    const turn = this.turn;
    const { messageId } = chunk;
    if (!turn || chunk.delta === "") return;
    let delta = chunk.delta;
    if (this.text?.type === type && this.text.messageId === messageId) {
      // Only what the item does not hold yet (it may have been given more than the events carried so far).
      delta = beyondHeld(this.text.held, chunk);
      this.text.held = heldAfter(this.text.held, chunk);
      if (delta === "") return;
    } else {
      this.closeText();
      this.text = { id: this.newTextItemId(type, messageId), type, messageId, text: "", held: heldAfter(0, chunk) };
      this.itemStarted(type === "agentMessage" ? { type, id: this.text.id, text: "" } : { type, id: this.text.id, summary: [], content: [] });
    }
    this.text.text += delta;
    const where = { threadId: this.host.threadId, turnId: turn.id, itemId: this.text.id };
    if (type === "agentMessage") this.host.emit("item/agentMessage/delta", { ...where, delta });
    // Plain thinking travels as a summary: the terminal UI always shows summaries, raw reasoning only on request.
    else this.host.emit("item/reasoning/summaryTextDelta", { ...where, delta, summaryIndex: 0 });
  }

  /** The message's item id; the same kind of one message again (text, thinking, text) gets a fresh one, as does a chunk that named no message. */
  private newTextItemId(type: TextItemType, messageId: string | undefined): string {
    const named = messageId === undefined ? undefined : textItemId(messageId, type);
    const id = named === undefined || this.textIds.has(named) ? randomUUID() : named;
    this.textIds.add(id);
    return id;
  }

  private closeText(): void {
    const text = this.text;
    if (!text) return;
    this.text = undefined;
    this.itemCompleted(text.type === "agentMessage" ? { type: "agentMessage", id: text.id, text: text.text } : { type: "reasoning", id: text.id, summary: [text.text], content: [] });
  }

  private toolStarted(id: string, name: string, args: Record<string, unknown> | undefined): void {
    const turn = this.turn;
    if (!turn || this.tools.has(id)) return;
    this.closeText();
    const kind = toolKind(name, args, this.host.catalog());
    const item = startedToolItem(id, name, args, kind, this.host.cwd(), this.host.threadId);
    if (!item) return;
    const held = item.type === "commandExecution" && this.host.mayAsk(name);
    this.tools.set(id, { name, item, claimed: false, declined: false, held });
    if (!held) this.itemStarted(item);
    if (kind.kind === "plan") {
      this.host.emit("turn/plan/updated", { threadId: this.host.threadId, turnId: turn.id, plan: planSteps(kind.text), explanation: null });
    }
  }

  private toolFinished(id: string, outcome: { output: string; isError: boolean; durationMs: number | null }): void {
    const tool = this.tools.get(id);
    if (!tool || !this.turn) return;
    // A call that ended without asking (it ran unasked, failed or was refused) still started first.
    this.release(tool);
    this.tools.delete(id);
    if (tool.item.type === "commandExecution" && outcome.output !== "" && !tool.declined) {
      this.host.emit("item/commandExecution/outputDelta", { threadId: this.host.threadId, turnId: this.turn.id, itemId: id, delta: outcome.output });
    }
    const agents = tool.item.type === "collabAgentToolCall" ? this.host.subagents?.agentsOf(tool.item) : undefined;
    const completed = completedToolItem(tool.item, { ...outcome, declined: tool.declined, agents }, tool.contentItems);
    this.itemCompleted(completed);
    if (completed.type === "collabAgentToolCall") {
      for (const item of this.host.subagents?.itemsAfter(completed) ?? []) {
        this.itemStarted(item);
        this.itemCompleted(item);
      }
    }
    if (tool.endsApprovalWait) this.wait("waitingOnApproval", -1);
  }

  /** Links an approval to the oldest command item of its tool not linked yet, which it returns. */
  private linkApproval(approvalId: string, toolName: string): ToolItem | undefined {
    const tool = [...this.tools.values()].find((t) => t.name === toolName && t.item.type === "commandExecution" && !t.claimed);
    if (!tool) return undefined;
    tool.claimed = true;
    this.approvals.set(approvalId, tool.item.id);
    return tool;
  }

  /** Starts a held command item (once). Like any tool item, it closes the text before it. */
  private release(tool: ToolItem): void {
    if (!tool.held) return;
    tool.held = false;
    this.closeText();
    this.itemStarted(tool.item);
  }

  /** Starts the held command items `which` picks, in the order Tau reported them. */
  private releaseHeld(which: (tool: ToolItem) => boolean): number {
    const released = [...this.tools.values()].filter((t) => t.held && which(t));
    for (const tool of released) this.release(tool);
    return released.length;
  }

  /**
   * A call decided without asking: the held commands of tools that no longer may ask start, or, if
   * this replica does not know of the grant, the oldest held one (the decision names no tool).
   */
  private releaseDecidedUnasked(): void {
    if (this.releaseHeld((tool) => !this.host.mayAsk(tool.name)) > 0) return;
    const oldest = [...this.tools.values()].find((t) => t.held);
    if (oldest) this.release(oldest);
  }

  /** Marks the command an approval decides as declined; true when its item is still open (and ends the wait when it completes). */
  private decline(approvalId: string): boolean {
    const id = this.approvals.get(approvalId);
    const tool = id === undefined ? undefined : this.tools.get(id);
    if (!tool) return false;
    tool.declined = true;
    tool.endsApprovalWait = true;
    return true;
  }

  private wait(flag: ThreadActiveFlag, change: 1 | -1): void {
    const turn = this.turn;
    if (!turn) return;
    const count = (turn.waiting.get(flag) ?? 0) + change;
    if (count > 0) turn.waiting.set(flag, count);
    else turn.waiting.delete(flag);
    this.reportStatus(true);
  }

  private endTurn(turnId: string | undefined, status: Turn["status"], error?: TurnError, usage?: { inputTokens: number; outputTokens: number }): void {
    const { threadId } = this.host;
    if (turnId === undefined) return;
    if (this.turn?.id !== turnId) {
      // A turn this thread never saw start (it ran before the thread was loaded): announce it, so its end is not an orphan.
      this.host.emit("turn/started", { threadId, turn: runningTurn(turnId) });
    } else {
      this.closeText();
      // Commands still held when their turn ends start now: every item the turn had is reported.
      this.releaseHeld(() => true);
    }
    if (usage) {
      const last = addUsage(this.total, usage);
      this.host.emit("thread/tokenUsage/updated", { threadId, turnId, tokenUsage: { total: { ...this.total }, last, modelContextWindow: this.host.contextWindow() ?? null } });
    }
    const startedAt = this.turn?.id === turnId ? this.turn.startedAt : undefined;
    const summary = this.turn?.id === turnId ? this.turn.lastAgentMessage : undefined;
    if (this.turn?.id === turnId) {
      this.turn = undefined;
      this.textIds.clear();
      this.tools.clear();
      this.approvals.clear();
    }
    this.failed = status === "failed";
    this.reportStatus();
    if (error) this.host.emit("error", { threadId, turnId, error, willRetry: false });
    this.host.emit("turn/completed", { threadId, turn: endedTurn(turnId, status, error, startedAt, summary) });
    this.host.turnEnded(turnId);
  }

  /** thread/status/changed when the status differs from the last one reported (`always`: also when only the flags changed). */
  private reportStatus(always = false): void {
    const status = this.status;
    if (!always && status.type === this.lastStatus && status.type !== "active") return;
    if (!always && status.type === "active" && this.lastStatus === "active") return;
    this.lastStatus = status.type;
    this.host.emit("thread/status/changed", { threadId: this.host.threadId, status });
  }

  private itemStarted(item: ThreadItem): void {
    if (!this.turn) return;
    this.host.emit("item/started", { threadId: this.host.threadId, turnId: this.turn.id, item, startedAtMs: Date.now() });
  }

  private itemCompleted(item: ThreadItem): void {
    if (!this.turn) return;
    if (item.type === "agentMessage") this.turn.lastAgentMessage = item;
    this.host.emit("item/completed", { threadId: this.host.threadId, turnId: this.turn.id, item, completedAtMs: Date.now() });
  }
}
