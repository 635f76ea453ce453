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
import { checkSnapshotInvariants } from "./delta-invariants.js";
import { deleteById, getById, hasId, sameJson, setById, type IdRecord } from "./delta-records.js";

/**
 * The patch semantics of spec §6.1: every change kind applied in order to a private copy of the
 * snapshot, so a failing change leaves the caller's snapshot untouched (a patch is atomic). The
 * copy is shallow — untouched messages and records are shared with the input, and a changed one is
 * replaced, never edited in place.
 */

/** Applies `changes` in order and checks the result's invariants; `revision` is left as it was. */
export function applyChanges(snapshot: Snapshot, changes: Change[]): Snapshot {
  const next = copyContainers(snapshot);
  let mayBreakReferences = false;
  changes.forEach((change, index) => {
    if (!applyOne(next, change, index)) mayBreakReferences = true;
  });
  // §6.2 rule 4: only changes that can break references or order need the full (linear) check;
  // streamed text, lifecycle and cost updates are the hot path and cannot.
  if (mayBreakReferences) checkSnapshotInvariants(next);
  return next;
}

function copyContainers(s: Snapshot): Snapshot {
  return {
    ...s,
    messages: [...s.messages],
    turns: { ...s.turns },
    timeline: { ...s.timeline, items: [...s.timeline.items] },
    tools: { ...s.tools },
    operations: { ...s.operations },
    agents: { ...s.agents },
    facets: { ...s.facets },
  };
}

/** Applies one change to `s` (a private copy); returns true when it cannot break references or order. */
function applyOne(s: Snapshot, change: Change, index: number): boolean {
  const type = isObject(change) && typeof change.type === "string" ? change.type : undefined;
  const invalid = (reason: string) => new InvalidDeltaError(reason, index, type);
  switch (change?.type) {
    case "agent-state.set":
      s.agentState = change.agentState;
      return false; // may move or drop the usage checkpoint
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
      setTurn(s.turns, change.turn, invalid);
      return true;
    case "message.append":
      if (s.messages.some((m) => m.id === change.message.id)) {
        throw invalid(`message id ${quote(change.message.id)} already exists (use message.replace to change it)`);
      }
      s.messages.push(change.message);
      return false;
    case "message.replace": {
      const at = findMessage(s.messages, change.message.id);
      if (at < 0) s.messages.push(change.message);
      else s.messages[at] = change.message;
      return false;
    }
    case "message.content.append":
      return appendContent(s.messages, change, invalid);
    case "timeline.append": {
      const { item } = change;
      if (item.sequence <= s.timeline.sequence) {
        throw invalid(
          `item ${quote(item.id)} has sequence ${item.sequence}, which does not exceed the high-water mark ${s.timeline.sequence}`,
        );
      }
      if (s.timeline.items.some((existing) => existing.id === item.id))
        throw invalid(`timeline item id ${quote(item.id)} already exists`);
      s.timeline.items.push(item);
      s.timeline.sequence = item.sequence;
      return false;
    }
    case "timeline.remove": {
      const at = s.timeline.items.findIndex((item) => item.id === change.id);
      if (at < 0) throw invalid(`no timeline item ${quote(change.id)} to remove`);
      s.timeline.items.splice(at, 1); // the high-water mark stays: sequences are never reused
      return false;
    }
    case "timeline.advance":
      if (change.epoch !== s.timeline.epoch) {
        throw invalid(`epoch ${change.epoch} is not the active timeline epoch ${s.timeline.epoch}`);
      }
      if (change.sequence <= s.timeline.sequence) {
        throw invalid(`sequence ${change.sequence} does not exceed the high-water mark ${s.timeline.sequence}`);
      }
      s.timeline.sequence = change.sequence;
      return true;
    case "tool.set": {
      const before = getById(s.tools, change.tool.id);
      setById(s.tools, change.tool.id, change.tool);
      // A status update that keeps every reference (position, result, facets) cannot break anything.
      return before !== undefined && sameJson(toolReferences(before), toolReferences(change.tool));
    }
    case "tool.remove":
      removeKeyed(s.tools, "tool", change.id, invalid);
      return false;
    case "operation.set": {
      const existed = hasId(s.operations, change.operation.id);
      setById(s.operations, change.operation.id, change.operation);
      return existed;
    }
    case "operation.remove":
      removeKeyed(s.operations, "operation", change.id, invalid);
      return false;
    case "agent.set":
      setById(s.agents, change.agent.id, change.agent); // an upsert never removes a notice/facet subject
      return true;
    case "agent.remove":
      removeKeyed(s.agents, "agent", change.id, invalid);
      return false;
    case "facet.set": {
      const before = getById(s.facets, change.facet.id);
      setById(s.facets, change.facet.id, change.facet);
      return before !== undefined && sameJson(before.subject, change.facet.subject);
    }
    case "facet.remove":
      removeKeyed(s.facets, "facet", change.id, invalid);
      return false;
    default:
      // A change kind this build does not know must fail loudly: silently skipping it would leave
      // a snapshot that differs from the host's while claiming the same revision.
      throw invalid(`unknown change type ${type === undefined ? "(missing)" : quote(type)}`);
  }
}

/** Upsert by userHistoryEntryId; a settled record is final (repeating the same value is allowed). */
function setTurn(turns: IdRecord<TurnRecord>, turn: TurnRecord, invalid: (reason: string) => Error): void {
  const current = getById(turns, turn.userHistoryEntryId);
  if (current?.state === "settled" && !sameJson(current, turn)) {
    throw invalid(`turn ${quote(turn.userHistoryEntryId)} is already settled and cannot change`);
  }
  setById(turns, turn.userHistoryEntryId, turn);
}

/**
 * Streams text/thinking into a draft assistant message. Returns false when a thinking block had to
 * be inserted in front of existing content, because that shifts the content indexes tools point at.
 */
function appendContent(
  messages: MessageRecord[],
  change: MessageContentAppendChange,
  invalid: (reason: string) => Error,
): boolean {
  const text = change.text ?? "";
  const thinking = change.thinking ?? "";
  if (text === "" && thinking === "") throw invalid("at least one of text and thinking must be non-empty");
  const at = findMessage(messages, change.messageId);
  if (at < 0) throw invalid(`no message ${quote(change.messageId)} to append to`);
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

/** Searches from the end: streamed and replaced messages are nearly always the newest. */
function findMessage(messages: MessageRecord[], id: string): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].id === id) return i;
  return -1;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const quote = (s: string) => JSON.stringify(s);
