import type {
  Change,
  MessageRecord,
  Operation,
  PendingUserMessagesState,
  SessionDeltaMessage,
  SessionEphemeralMessage,
  SessionSubagentActivitiesMessage,
  Snapshot,
  SubagentActivitiesState,
  ToolRun,
  TurnOutcome,
  TurnRecord,
} from "../../../generated/tau-v18.js";
import { draft, type EventDraft } from "../event-draft.js";
import { messageText, messageThinking, toolCallArguments, toolDuration, toolOutput } from "../message-content.js";
import { sessionHistory, type HistoryGroup } from "./session-history.js";
import { entryEvents, groupEvents, turnEndEvent, userMessageEvent } from "./history-events.js";
import { feedbackEvent, noticeEvent } from "./notice-events.js";
import { SubagentEvents } from "./subagent-events.js";
import type { IgnoredChangeKind } from "./translated-kinds.js";
import { TurnLedger } from "./turn-ledger.js";
import { reopen, reportMarks } from "./report-marks.js";
import { COMPACTION_KIND, isTerminal, SHOWN_STATES } from "./record-states.js";

/**
 * Tau deltas → Ask events (DESIGN §4.3). The translator sees every applied delta of one session
 * together with the snapshots around it and remembers what it already reported, so each turn gets
 * one `turn.started` and exactly one terminal event, each tool one `tool.use` before one
 * `tool.result`, each user message one `user.message`, and streamed text is never repeated when
 * its message is committed; streamed chunks name the message they belong to and where in it they
 * begin. It reports what the session did, whichever client started the work. Turns it never saw
 * (before the gateway looked, or while it was away) are told whole, from the snapshot
 * (history-events.ts).
 */

export type { EventDraft } from "../event-draft.js";

interface StreamMark {
  text: number;
  thinking: number;
}

export class DeltaTranslator {
  private readonly marks = reportMarks();
  /** User messages reported (user.message) or counted as seen. */
  private readonly toldMessages = new Set<string>();
  /** Characters of text/thinking already emitted per assistant message. */
  private readonly streamed = new Map<string, StreamMark>();
  private readonly ledger = new TurnLedger();
  private readonly subagents = new SubagentEvents();

  /**
   * `baseline` = the snapshot installed by session.observe (and `activities`, its sub-agent
   * activity lists); what it holds counts as already seen (a caller that shows a turn already
   * running reports its start itself).
   */
  constructor(baseline: Snapshot, activities?: SubagentActivitiesState) {
    this.absorb(baseline);
    if (activities) this.subagents.absorbActivities(activities);
  }

  /**
   * A translator taking over a session whose earlier events another gateway process reported
   * (`reported`, the retained end of the shared log): what those events left open counts as not
   * yet reported, so a `resync` of `snapshot` ends every turn, tool and compaction they started
   * and that has finished meanwhile, and starts every running turn they never mentioned — each
   * turn keeps exactly one start and one end across the two processes.
   */
  static resumingAfter(snapshot: Snapshot, reported: ReadonlyArray<{ type: string; payload: unknown }>, activities?: SubagentActivitiesState): DeltaTranslator {
    const translator = new DeltaTranslator(snapshot, activities);
    reopen(translator.marks, reported, snapshot);
    return translator;
  }

  /**
   * The whole conversation of `snapshot` (the baseline this translator started from), as the events
   * its turns would have produced: what a log that starts with the session's first sight holds
   * after `session.created`, so replaying it tells turns the gateway never watched. A turn still
   * running is told so far; the rest of it follows live.
   */
  history(snapshot: Snapshot, activities?: SubagentActivitiesState): EventDraft[] {
    return [...sessionHistory(snapshot).flatMap((group) => this.retell(group, snapshot)), ...this.subagents.history(snapshot, activities)];
  }

  /** A message of the sub-agent activity channel: the new activities of each run it names. */
  activities(message: SessionSubagentActivitiesMessage): EventDraft[] {
    return this.subagents.message(message);
  }

  /** The activity channel's whole state (a fresh observe): what changed since is reported. */
  activityState(state: SubagentActivitiesState): EventDraft[] {
    return this.subagents.state(state);
  }

  /** Events for one applied delta. `before`/`after` are the snapshots around it (after = applyDelta result). */
  delta(message: SessionDeltaMessage, before: Snapshot, after: Snapshot): EventDraft[] {
    const out: EventDraft[] = [];
    if (message.delta.type === "snapshot.reset") {
      const cause = message.cause.type === "compaction" || message.cause.type === "rewind" ? message.cause.type : "resync";
      out.push(draft("session.reset", { cause, epoch: after.timeline.epoch }));
      this.reconcile(after, out);
      return out;
    }
    for (const change of message.delta.changes) this.change(change, before, after, out);
    return out;
  }

  /** The pending queue/steer list changed (the caller applies only newer revisions). */
  pending(state: PendingUserMessagesState): EventDraft[] {
    return [draft("queue.updated", { messages: state.messages.map(({ id, mode, text }) => ({ id, mode, text })) })];
  }

  /** Live notices; a timeline notice counts only in the installed timeline epoch (spec §6.3). */
  ephemeral(message: SessionEphemeralMessage, installed: Snapshot): EventDraft[] {
    const { event } = message;
    switch (event.type) {
      case "timeline.item":
        return event.epoch === installed.timeline.epoch ? [noticeEvent(event.item.notice)] : [];
      case "feedback.notice":
        return [feedbackEvent(event)];
      case "ephemeral-agent.thread-update":
        return []; // ephemeral-context progress has no Ask event
    }
  }

  /**
   * After a resync: `session.reset {cause:"resync"}`, then what happened while away — results of
   * reported tools that finished, the end of every turn that settled, and the start of turns now
   * running that were never reported.
   */
  resync(snapshot: Snapshot): EventDraft[] {
    const out: EventDraft[] = [draft("session.reset", { cause: "resync", epoch: snapshot.timeline.epoch })];
    this.reconcile(snapshot, out);
    return out;
  }

  private change(change: Change, before: Snapshot, after: Snapshot, out: EventDraft[]): void {
    switch (change.type) {
      case "turn.set":
        this.turn(change.turn, after, out);
        return;
      case "message.append":
      case "message.replace":
        if (change.message.message.role === "user") this.userMessage(change.message, after, out);
        else this.message(change.message, out);
        return;
      case "message.content.append": {
        const mark = this.mark(change.messageId);
        const { messageId } = change;
        if (change.thinking) {
          out.push(draft("model.thinking", { delta: change.thinking, messageId, offset: mark.thinking }));
          mark.thinking += change.thinking.length;
        }
        if (change.text) {
          out.push(draft("model.streaming", { delta: change.text, messageId, offset: mark.text }));
          mark.text += change.text.length;
        }
        return;
      }
      case "tool.set":
        this.tool(change.tool, before, after, out);
        return;
      case "operation.set":
        this.operation(change.operation, out);
        return;
      case "timeline.append":
        if (change.item.type === "notice") out.push(noticeEvent(change.item.notice));
        return;
      case "agent.set":
        this.subagents.agent(change.agent, after, out);
        return;
      case "agent.remove":
        this.subagents.removed(change.id, out);
        return;
      default:
        // Only kinds CHANGE_KINDS marks ignored may reach this point.
        change.type satisfies IgnoredChangeKind;
        return;
    }
  }

  private turn(turn: TurnRecord, after: Snapshot, out: EventDraft[]): void {
    const turnId = turn.userHistoryEntryId;
    if (!this.marks.startedTurns.has(turnId)) {
      this.marks.startedTurns.add(turnId);
      this.ledger.start(turnId, after);
      out.push(draft("turn.started", { turnId }));
    }
    if (turn.state === "settled") this.endTurn(turnId, turn.outcome, after, out);
  }

  private endTurn(turnId: string, outcome: TurnOutcome, snapshot: Snapshot, out: EventDraft[]): void {
    if (this.marks.endedTurns.has(turnId)) return;
    this.marks.endedTurns.add(turnId);
    out.push(turnEndEvent(turnId, outcome, this.ledger.finish(turnId, snapshot)));
  }

  /**
   * A user message joined the conversation: reported once. A prompt that starts a turn comes
   * right after that turn's start (Tau appends the message before it records the turn); any other
   * names the turn running, if one is.
   */
  private userMessage(record: MessageRecord, after: Snapshot, out: EventDraft[]): void {
    if (this.toldMessages.has(record.id) || record.state === "discarded") return;
    this.toldMessages.add(record.id);
    const ownTurn = after.turns[record.id];
    if (ownTurn && !this.marks.startedTurns.has(record.id)) {
      this.marks.startedTurns.add(record.id);
      this.ledger.start(record.id, after);
      out.push(draft("turn.started", { turnId: record.id }));
    }
    const turnId = ownTurn ? record.id : lastRunningTurn(after, record.id);
    out.push(userMessageEvent(record.id, turnId, messageText(record.message)));
  }

  /**
   * Tells what a turn reported as started did while unwatched (its messages and tools of which
   * nothing, or only part, was reported), in the conversation's order, before its end.
   */
  private catchUp(group: HistoryGroup, snapshot: Snapshot, out: EventDraft[]): void {
    const turnId = group.turn?.userHistoryEntryId;
    const caughtUp = new Set<string>();
    for (const entry of group.entries) {
      if (entry.kind === "user") {
        if (this.toldMessages.has(entry.messageId)) continue;
        this.toldMessages.add(entry.messageId);
        out.push(userMessageEvent(entry.messageId, turnId, entry.text));
      } else if (entry.kind === "tool") {
        if (entry.status === "streaming" || this.marks.usedTools.has(entry.id)) continue;
        this.marks.usedTools.add(entry.id);
        if (entry.ending) this.marks.finishedTools.add(entry.id);
        out.push(...entryEvents(entry, turnId));
      } else if (!caughtUp.has(entry.messageId)) {
        // The rest of the message's thinking and text, beyond what was streamed.
        caughtUp.add(entry.messageId);
        const record = snapshot.messages.find((m) => m.id === entry.messageId);
        if (record) this.message(record, out);
      }
    }
  }

  /**
   * Tells a turn (or the messages before the first turn) from the snapshot alone, as if it had been
   * watched, and counts all of it as reported: its start, messages and tools, and its end if settled.
   */
  private retell(group: HistoryGroup, snapshot: Snapshot): EventDraft[] {
    const turnId = group.turn?.userHistoryEntryId;
    if (turnId !== undefined) {
      this.marks.startedTurns.add(turnId);
      if (group.turn?.state === "settled") {
        this.marks.endedTurns.add(turnId);
        this.ledger.finish(turnId, snapshot);
      } else this.ledger.start(turnId, snapshot);
    }
    for (const entry of group.entries) {
      if (entry.kind === "user") this.toldMessages.add(entry.messageId);
      if (entry.kind !== "tool" || entry.status === "streaming") continue;
      this.marks.usedTools.add(entry.id);
      if (entry.ending) this.marks.finishedTools.add(entry.id);
    }
    return groupEvents(group, snapshot);
  }

  /** An assistant message was set: emit whatever of its text was never streamed, once. */
  private message(record: MessageRecord, out: EventDraft[]): void {
    if (record.message.role !== "assistant" || !SHOWN_STATES[record.state]) return;
    const mark = this.mark(record.id);
    const thinking = messageThinking(record.message);
    const messageId = record.id;
    if (thinking.length > mark.thinking) out.push(draft("model.thinking", { delta: thinking.slice(mark.thinking), messageId, offset: mark.thinking }));
    const text = messageText(record.message);
    if (text.length > mark.text) out.push(draft("model.streaming", { delta: text.slice(mark.text), messageId, offset: mark.text }));
    mark.thinking = Math.max(mark.thinking, thinking.length);
    mark.text = Math.max(mark.text, text.length);
    this.ledger.record(record);
  }

  private tool(tool: ToolRun, before: Snapshot, after: Snapshot, out: EventDraft[]): void {
    if (tool.status === "streaming" || this.marks.finishedTools.has(tool.id)) return; // arguments still arriving
    if (!this.marks.usedTools.has(tool.id)) {
      this.marks.usedTools.add(tool.id);
      const args = toolCallArguments(tool.call, after, before);
      out.push(draft("tool.use", { id: tool.id, name: tool.toolName, ...(args ? { args } : {}) }));
    }
    if (!isTerminal(tool)) return;
    this.marks.finishedTools.add(tool.id);
    out.push(
      draft("tool.result", {
        id: tool.id,
        name: tool.toolName,
        output: toolOutput(tool, after, before),
        isError: tool.status !== "succeeded",
        durationMs: toolDuration(tool),
      }),
    );
  }

  private operation(operation: Operation, out: EventDraft[]): void {
    const kind = COMPACTION_KIND[operation.kind];
    if (!kind || this.marks.finishedOperations.has(operation.id)) return; // reload and rewind have their own signals
    if (!this.marks.startedOperations.has(operation.id)) {
      this.marks.startedOperations.add(operation.id);
      out.push(draft("compaction.started", { operationId: operation.id, kind }));
    }
    if (operation.status === "running") return;
    this.marks.finishedOperations.add(operation.id);
    const detail =
      operation.status === "failed" ? { error: operation.error } : operation.status === "skipped" || operation.status === "cancelled" ? { reason: operation.reason } : {};
    out.push(draft("compaction.completed", { operationId: operation.id, kind, status: operation.status, ...detail }));
  }

  /**
   * Brings the bookkeeping up to a snapshot that replaced the state wholesale (a reset or a
   * resync), reporting what a subscriber needs not to wait forever — ends of compactions and tools
   * it saw start, ends of turns — and every turn it never saw, told whole from the snapshot.
   */
  private reconcile(snapshot: Snapshot, out: EventDraft[]): void {
    for (const operation of Object.values(snapshot.operations)) {
      if (this.marks.startedOperations.has(operation.id)) this.operation(operation, out);
    }
    for (const tool of Object.values(snapshot.tools)) {
      if (this.marks.usedTools.has(tool.id) && isTerminal(tool)) this.tool(tool, snapshot, snapshot, out);
    }
    let history: Map<string, HistoryGroup> | undefined;
    for (const turn of Object.values(snapshot.turns)) {
      const turnId = turn.userHistoryEntryId;
      if (this.marks.endedTurns.has(turnId)) continue;
      history ??= new Map(sessionHistory(snapshot).flatMap((group) => (group.turn ? [[group.turn.userHistoryEntryId, group] as const] : [])));
      const group = history.get(turnId) ?? { turn, entries: [] };
      if (this.marks.startedTurns.has(turnId)) {
        this.catchUp(group, snapshot, out);
        if (turn.state === "settled") this.turn(turn, snapshot, out);
        continue;
      }
      out.push(...this.retell(group, snapshot));
    }
    // A turn reported as started that the host no longer knows can never settle: end it here.
    for (const turnId of this.marks.startedTurns) {
      if (!this.marks.endedTurns.has(turnId) && !(turnId in snapshot.turns)) {
        this.marks.endedTurns.add(turnId);
        this.ledger.finish(turnId, snapshot);
        out.push(draft("turn.failed", { turnId, error: "the turn is no longer known to the Tau host; its outcome was lost" }));
      }
    }
    this.subagents.reconcile(snapshot, out);
    this.absorb(snapshot);
  }

  /**
   * Marks `snapshot` as reported, without events: its turns (a running one's end is still to
   * come), the text of its assistant messages, and its finished tools and operations. Tools and
   * operations still in progress stay unreported, so their start is emitted with their next
   * change at the latest — never an end without a start.
   */
  private absorb(snapshot: Snapshot): void {
    this.subagents.absorb(snapshot);
    this.streamed.clear();
    for (const record of snapshot.messages) {
      if (record.message.role === "user") this.toldMessages.add(record.id);
      if (record.message.role !== "assistant") continue;
      this.streamed.set(record.id, { text: messageText(record.message).length, thinking: messageThinking(record.message).length });
    }
    for (const turn of Object.values(snapshot.turns)) {
      this.marks.startedTurns.add(turn.userHistoryEntryId);
      if (turn.state === "settled") this.marks.endedTurns.add(turn.userHistoryEntryId);
      else this.ledger.start(turn.userHistoryEntryId, snapshot);
    }
    for (const tool of Object.values(snapshot.tools)) {
      if (!isTerminal(tool)) continue;
      this.marks.usedTools.add(tool.id);
      this.marks.finishedTools.add(tool.id);
    }
    for (const operation of Object.values(snapshot.operations)) {
      if (operation.status === "running") continue;
      this.marks.startedOperations.add(operation.id);
      this.marks.finishedOperations.add(operation.id);
    }
  }

  private mark(messageId: string): StreamMark {
    let mark = this.streamed.get(messageId);
    if (!mark) this.streamed.set(messageId, (mark = { text: 0, thinking: 0 }));
    return mark;
  }
}

/** The newest running turn other than `except`'s (only read for a message without a turn of its own: every turn's record is walked). */
function lastRunningTurn(snapshot: Snapshot, except: string): string | undefined {
  let last: string | undefined;
  for (const turn of Object.values(snapshot.turns)) if (turn.state === "running" && turn.userHistoryEntryId !== except) last = turn.userHistoryEntryId;
  return last;
}
