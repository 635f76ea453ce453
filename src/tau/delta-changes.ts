import type {
  Change,
  MessageContentAppendChange,
  MessageRecord,
  Snapshot,
  TextContent,
  ThinkingContent,
  ToolCall,
  TurnRecord,
} from "../../generated/tau-v18.js";
import { InvalidDeltaError } from "./delta-errors.js";
import { checkLocalInvariants, checkSnapshotInvariants, type LocalCheck } from "./delta-invariants.js";
import { deleteById, getById, hasId, sameJson, setById, type IdRecord } from "./delta-records.js";
import { lastIndexOf, ListIndex } from "./list-index.js";
import { copyRecord, passOn, RecordWrites, SHARED_KEYS, type SharedKey } from "./shared-records.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * The patch semantics of spec §6.1: every change kind applied in order to a private copy of the
 * snapshot, so a failing change leaves the caller's snapshot untouched (a patch is atomic). The
 * copy is shallow and made on write — untouched messages, records and containers are shared with
 * the input, and a changed one is replaced, never edited in place — except, when the caller asks,
 * the records that grow with the session, which shared-records.ts updates in place while the input
 * keeps its value.
 */

export interface ApplyOptions {
  /**
   * Write the records that grow with the session (`turns`, `tools`) in place when the input is the
   * newest snapshot of its lineage, the input getting its own value back on first read
   * (shared-records.ts): for a caller that keeps one current snapshot, as the snapshot-mirror does.
   * Such a caller's message and timeline lookups use an index that moves from list to list with
   * the patches (list-index.ts) instead of walking the lists.
   */
  share?: boolean;
}

/** Applies `changes` in order and checks the result's invariants; `revision` is left as it was. */
export function applyChanges(snapshot: Snapshot, changes: Change[], options: ApplyOptions = {}): Snapshot {
  // A removal from a shared record copies it (shared-records.ts restores only added ids in order).
  const shared = options.share ? SHARED_KEYS.filter((key) => key !== "tools" || !changes.some((c) => c?.type === "tool.remove")) : [];
  const draft = new Draft(snapshot, shared, options.share === true);
  try {
    let mayBreakReferences = false;
    const local: LocalCheck[] = [];
    changes.forEach((change, index) => {
      const verdict = applyOne(draft, change, index);
      if (verdict === false) mayBreakReferences = true;
      else if (verdict !== true) local.push(verdict);
    });
    // §6.2 rule 4: only changes that can break references or order need the full (linear) check;
    // streamed text, lifecycle and cost updates are the hot path and cannot. The changes of every
    // turn (a message appended or replaced, its timeline item, the agent state) are checked for what
    // they can break, on the patched snapshot, so other changes of the patch count.
    if (mayBreakReferences) checkSnapshotInvariants(draft.s);
    else if (local.length > 0) checkLocalInvariants(draft.s, local);
  } catch (error) {
    draft.rollback();
    throw error;
  }
  draft.commit();
  return draft.s;
}

type KeyedContainer = "turns" | "tools" | "operations" | "agents" | "facets";

/**
 * The snapshot being built. A container (the message list, the timeline, an id-keyed record) is
 * copied the first time a change writes to it, so a patch costs what it changes rather than the
 * size of the session: copying every container for every streamed chunk made each delta of a long
 * session (hundreds of turns and tools) cost hundreds of microseconds, on the host and the gateway.
 */
class Draft {
  readonly s: Snapshot;
  private readonly copied = new Set<string>();
  private readonly writes = new Map<SharedKey, RecordWrites>();
  /** With `share` (`indexed`): the indexes of the message list and the timeline's items, made on first use (list-index.ts). */
  private messageIndexOf: ListIndex | undefined;
  private itemIndexOf: ListIndex | undefined;

  constructor(
    private readonly input: Snapshot,
    private readonly shared: readonly SharedKey[],
    private readonly indexed: boolean,
  ) {
    this.s = { ...input };
  }

  private get messageIndex(): ListIndex | undefined {
    return this.indexed ? (this.messageIndexOf ??= new ListIndex(this.input.messages)) : undefined;
  }

  private get itemIndex(): ListIndex | undefined {
    return this.indexed ? (this.itemIndexOf ??= new ListIndex(this.input.timeline.items)) : undefined;
  }

  /** The position of message `id` in the draft's list, or -1. */
  findMessage(id: string): number {
    return this.messageIndex ? this.messageIndex.indexOf(this.s.messages, id) : lastIndexOf(this.s.messages, id);
  }

  /** Appends to the message list (copied with the entry in one step the first time: see withEntry). */
  appendMessage(message: MessageRecord): void {
    if (this.once("messages")) this.s.messages = withEntry(this.s.messages, message);
    else this.s.messages.push(message);
    this.messageIndex?.appended(this.s.messages);
  }

  hasTimelineItem(id: string): boolean {
    const { items } = this.s.timeline;
    return this.itemIndex ? this.itemIndex.indexOf(items, id) >= 0 : items.some((existing) => existing.id === id);
  }

  appendTimelineItem(item: Snapshot["timeline"]["items"][number]): void {
    const timeline = this.timeline();
    if (this.once("timeline.items")) timeline.items = withEntry(timeline.items, item);
    else timeline.items.push(item);
    this.itemIndex?.appended(timeline.items);
  }

  removeTimelineItem(at: number): void {
    this.timelineItems().splice(at, 1);
    this.itemIndex?.removed();
  }

  messages(): MessageRecord[] {
    if (this.once("messages")) this.s.messages = [...this.s.messages];
    return this.s.messages;
  }

  /** The timeline object, copied; its items array is still shared (see timelineItems). */
  timeline(): Snapshot["timeline"] {
    if (this.once("timeline")) this.s.timeline = { ...this.s.timeline };
    return this.s.timeline;
  }

  timelineItems(): Snapshot["timeline"]["items"] {
    const timeline = this.timeline();
    if (this.once("timeline.items")) timeline.items = [...timeline.items];
    return timeline.items;
  }

  /** Sets `id` of a keyed record (in place when the record is shared: shared-records.ts). */
  set<K extends KeyedContainer>(key: K, id: string, value: Snapshot[K][string]): void {
    const writes = this.sharedWrites(key);
    if (writes) writes.set(id, value);
    else setById(this.record(key) as IdRecord<Snapshot[K][string]>, id, value);
  }

  /** A keyed record to remove from (never a shared one: see applyChanges). */
  record<K extends KeyedContainer>(key: K): Snapshot[K] {
    if (this.once(key)) this.s[key] = copyRecord(this.s[key]).copy as Snapshot[K];
    return this.s[key];
  }

  /** The patch failed: a shared record written in place is put back. */
  rollback(): void {
    for (const writes of this.writes.values()) writes.rollback();
    this.messageIndexOf?.rollback();
    this.itemIndexOf?.rollback();
  }

  /** The patch succeeded: the result owns the shared records, and the input keeps its own values. */
  commit(): void {
    this.messageIndexOf?.commit(this.s.messages);
    this.itemIndexOf?.commit(this.s.timeline.items);
    for (const key of this.shared) {
      const writes = this.writes.get(key);
      if (writes) writes.commit(this.s);
      else passOn(this.input, this.s, key);
    }
  }

  private sharedWrites(key: KeyedContainer): RecordWrites | undefined {
    if (!(this.shared as readonly string[]).includes(key)) return undefined;
    const shared = key as SharedKey;
    let writes = this.writes.get(shared);
    if (!writes) {
      writes = new RecordWrites(this.input, shared);
      this.writes.set(shared, writes);
      (this.s as Record<SharedKey, unknown>)[shared] = writes.record;
    }
    return writes;
  }

  private once(key: string): boolean {
    if (this.copied.has(key)) return false;
    this.copied.add(key);
    return true;
  }
}

/**
 * Applies one change to the draft; returns true when it cannot break references or order, the local
 * check of what it can break, or false when only the full check will do.
 */
function applyOne(d: Draft, change: Change, index: number): boolean | LocalCheck {
  const s = d.s;
  const type = isObject(change) && typeof change.type === "string" ? change.type : undefined;
  const invalid = (reason: string) => new InvalidDeltaError(reason, index, type);
  switch (change?.type) {
    case "agent-state.set":
      s.agentState = change.agentState;
      return { kind: "usage-checkpoint" }; // may move or drop the usage checkpoint
    case "lifecycle.set":
      s.lifecycle = change.lifecycle;
      return true;
    case "cost.set":
      s.costTotal = change.costTotal;
      return true;
    case "settings.set":
      s.settings = change.settings;
      return true;
    case "turn.set":
      setTurn(d, change.turn, invalid);
      return true;
    case "message.append":
      if (d.findMessage(change.message.id) >= 0) {
        throw invalid(`message id ${quote(change.message.id)} already exists (use message.replace to change it)`);
      }
      d.appendMessage(change.message);
      return { kind: "message", id: change.message.id };
    case "message.replace": {
      const at = d.findMessage(change.message.id);
      if (at < 0) d.appendMessage(change.message);
      else d.messages()[at] = change.message;
      return { kind: "message", id: change.message.id };
    }
    case "message.content.append":
      return appendContent(d, change, invalid);
    case "timeline.append": {
      const { item } = change;
      if (item.sequence <= s.timeline.sequence) {
        throw invalid(
          `item ${quote(item.id)} has sequence ${item.sequence}, which does not exceed the high-water mark ${s.timeline.sequence}`,
        );
      }
      if (d.hasTimelineItem(item.id)) throw invalid(`timeline item id ${quote(item.id)} already exists`);
      d.appendTimelineItem(item);
      d.timeline().sequence = item.sequence;
      return { kind: "timeline-item", id: item.id };
    }
    case "timeline.remove": {
      const at = s.timeline.items.findIndex((item) => item.id === change.id);
      if (at < 0) throw invalid(`no timeline item ${quote(change.id)} to remove`);
      d.removeTimelineItem(at); // the high-water mark stays: sequences are never reused
      return false;
    }
    case "timeline.advance":
      if (change.epoch !== s.timeline.epoch) {
        throw invalid(`epoch ${change.epoch} is not the active timeline epoch ${s.timeline.epoch}`);
      }
      if (change.sequence <= s.timeline.sequence) {
        throw invalid(`sequence ${change.sequence} does not exceed the high-water mark ${s.timeline.sequence}`);
      }
      d.timeline().sequence = change.sequence;
      return true;
    case "tool.remove":
    case "operation.remove":
    case "agent.remove":
    case "facet.remove": {
      // Something may still refer to the removed record: the references are checked afterwards.
      const [container, what] = REMOVALS[change.type];
      removeKeyed(d.record(container), what, change.id, invalid);
      return false;
    }
    case "tool.set": {
      const before = getById(s.tools, change.tool.id);
      d.set("tools", change.tool.id, change.tool);
      // A status update that keeps every reference (position, result, facets) cannot break anything.
      return before !== undefined && sameJson(toolReferences(before), toolReferences(change.tool));
    }
    case "operation.set": {
      const existed = hasId(s.operations, change.operation.id);
      d.set("operations", change.operation.id, change.operation);
      return existed;
    }
    case "agent.set":
      d.set("agents", change.agent.id, change.agent); // an upsert never removes a notice/facet subject
      return true;
    case "facet.set": {
      const before = getById(s.facets, change.facet.id);
      d.set("facets", change.facet.id, change.facet);
      return before !== undefined && sameJson(before.subject, change.facet.subject);
    }
    default:
      // A change kind this build does not know must fail loudly: silently skipping it would leave
      // a snapshot that differs from the host's while claiming the same revision.
      throw invalid(`unknown change type ${type === undefined ? "(missing)" : quote(type)}`);
  }
}

/**
 * A copy of `list` with `entry` appended: `concat` makes it at its final size in one copy, where a
 * spread copy grows (copies again) on the `push` that follows, and it is 2.5x faster on this
 * machine (a list of 440 entries: 0.7 µs against 1.7; of 2,000: 2.9 against 7.5).
 */
function withEntry<T>(list: readonly T[], entry: T): T[] {
  return list.concat([entry]);
}

/** Upsert by userHistoryEntryId; a settled record is final (repeating the same value is allowed). */
function setTurn(d: Draft, turn: TurnRecord, invalid: (reason: string) => Error): void {
  const current = getById(d.s.turns, turn.userHistoryEntryId);
  if (current?.state === "settled" && !sameJson(current, turn)) {
    throw invalid(`turn ${quote(turn.userHistoryEntryId)} is already settled and cannot change`);
  }
  d.set("turns", turn.userHistoryEntryId, turn);
}

/**
 * Streams text/thinking into a draft assistant message. Returns false when a thinking block had to
 * be inserted in front of existing content, because that shifts the content indexes tools point at.
 */
function appendContent(d: Draft, change: MessageContentAppendChange, invalid: (reason: string) => Error): boolean {
  const text = change.text ?? "";
  const thinking = change.thinking ?? "";
  if (text === "" && thinking === "") throw invalid("at least one of text and thinking must be non-empty");
  const at = d.findMessage(change.messageId);
  if (at < 0) throw invalid(`no message ${quote(change.messageId)} to append to`);
  const messages = d.messages();
  const record = messages[at];
  const payload = record.message;
  if (record.state !== "draft" || payload.role !== "assistant") {
    throw invalid(
      `message ${quote(change.messageId)} is a ${record.state} ${payload.role} message, not a draft assistant message`,
    );
  }
  const content: (TextContent | ThinkingContent | ToolCall)[] = [...payload.content];
  let shifted = false;
  if (thinking !== "") {
    const existing = content.findIndex((b) => b.type === "thinking");
    if (existing >= 0) {
      const block = content[existing] as ThinkingContent;
      content[existing] = { ...block, thinking: block.thinking + thinking };
    } else {
      const firstText = content.findIndex((b) => b.type === "text");
      if (firstText >= 0) {
        content.splice(firstText, 0, { type: "thinking", thinking });
        shifted = true;
      } else {
        content.push({ type: "thinking", thinking });
      }
    }
  }
  if (text !== "") {
    const existing = content.findIndex((b) => b.type === "text");
    if (existing >= 0) {
      const block = content[existing] as TextContent;
      content[existing] = { ...block, text: block.text + text };
    } else {
      content.push({ type: "text", text });
    }
  }
  messages[at] = { ...record, message: { ...payload, content, timestamp: change.timestamp } };
  return !shifted;
}

/** What each `*.remove` change deletes: the snapshot container and the word errors use. */
const REMOVALS = {
  "tool.remove": ["tools", "tool"],
  "operation.remove": ["operations", "operation"],
  "agent.remove": ["agents", "agent"],
  "facet.remove": ["facets", "facet"],
} as const satisfies Record<string, readonly [KeyedContainer, string]>;

function removeKeyed(map: IdRecord<unknown>, what: string, id: string, invalid: (reason: string) => Error): void {
  if (!hasId(map, id)) throw invalid(`no ${what} ${quote(id)} to remove`);
  deleteById(map, id);
}

const toolReferences = (tool: Snapshot["tools"][string]) => ({
  position: tool.status === "streaming" ? { origin: tool.origin } : { call: tool.call },
  resultMessageId: tool.status === "streaming" ? undefined : tool.resultMessageId,
  facetIds: tool.facetIds,
  toolCallId: tool.toolCallId,
});

const quote = (s: string) => JSON.stringify(s);
