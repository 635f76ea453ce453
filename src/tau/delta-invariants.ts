import type { MessageRecord, Snapshot, Subject, ToolRun } from "../../generated/tau-v18.js";
import { InvalidDeltaError } from "./delta-errors.js";
import { getById, hasId, type IdRecord } from "./delta-records.js";

/**
 * The snapshot-level invariants of spec §5.6–§5.10 that JSON Schema cannot express: unique ids,
 * map keys equal to embedded ids, references between messages, tools, operations, facets and the
 * timeline, and timeline order. Tau checks the same on every snapshot it builds, so a delta whose
 * result fails here is a broken delta and the client must resynchronise (§6.2 rule 6).
 */

function fail(reason: string): never {
  throw new InvalidDeltaError(`snapshot invariant violated: ${reason}`);
}

const quote = (s: string) => JSON.stringify(s);

/** Throws InvalidDeltaError naming the first violated invariant. */
export function checkSnapshotInvariants(snapshot: Snapshot): void {
  const messages = indexMessages(snapshot.messages);
  checkMapKeys(snapshot);
  checkTimeline(snapshot, messages);
  for (const tool of Object.values(snapshot.tools)) checkToolReferences(snapshot, tool, messages);
  for (const facet of Object.values(snapshot.facets)) {
    if (!subjectExists(snapshot, messages, facet.subject))
      fail(`facet ${quote(facet.id)} has a missing subject ${describeSubject(facet.subject)}`);
  }
  checkUsageCheckpoint(snapshot, messages);
}

/**
 * What one change of the kinds every turn makes can break, checked on the patched snapshot instead
 * of the whole of it (checkLocalInvariants): an appended or replaced message, an appended timeline
 * item, a new agent state.
 */
export type LocalCheck = { kind: "message"; id: string } | { kind: "timeline-item"; id: string } | { kind: "usage-checkpoint" };

/** Messages by id without indexing them all: the few lookups of a local check search from the end, where new messages are. */
type MessageLookup = Pick<Map<string, MessageRecord>, "get" | "has">;

function lookupFromEnd(list: MessageRecord[]): MessageLookup {
  const get = (id: string) => {
    for (let i = list.length - 1; i >= 0; i--) if (list[i].id === id) return list[i];
    return undefined;
  };
  return { get, has: (id) => get(id) !== undefined };
}

/**
 * Throws InvalidDeltaError naming the first violated invariant among those `checks` can break. The
 * installed snapshot passed the full check, and these changes touch nothing but what is checked
 * here: a message (its own place, the tools whose call, origin or result it is, the usage
 * checkpoint naming it; what only needs it to exist still finds it), a timeline item (its target,
 * the one item of its tool or operation) or the agent state (the checkpoint). So a turn costs what
 * it changes, not the session's length, as a delta does (delta-changes.ts).
 */
export function checkLocalInvariants(snapshot: Snapshot, checks: readonly LocalCheck[]): void {
  const messages = lookupFromEnd(snapshot.messages);
  for (const check of checks) {
    if (check.kind === "usage-checkpoint") checkUsageCheckpoint(snapshot, messages);
    else if (check.kind === "message") checkMessage(snapshot, check.id, messages);
    else checkTimelineItem(snapshot, check.id, messages);
  }
}

function checkMessage(snapshot: Snapshot, id: string, messages: MessageLookup): void {
  const list = snapshot.messages;
  let index = list.length - 1;
  while (index >= 0 && list[index].id !== id) index--;
  if (index < 0) return; // replaced again, then removed by a later change of the same patch: nothing refers to it
  const record = list[index];
  if (index > 0 && record.message.role === "system" && !("metadata" in record.message)) {
    fail(`message ${quote(record.id)} at index ${index} is a system message without metadata (only messages[0] may be the base system prompt)`);
  }
  for (const tool of Object.values(snapshot.tools)) {
    const position = tool.status === "streaming" ? tool.origin : tool.call;
    const result = tool.status === "streaming" ? undefined : tool.resultMessageId;
    if (position.messageId === id || result === id) checkToolReferences(snapshot, tool, messages);
  }
  if (snapshot.agentState.usageCheckpoint?.historyEntryId === id) checkUsageCheckpoint(snapshot, messages);
}

function checkTimelineItem(snapshot: Snapshot, id: string, messages: MessageLookup): void {
  const items = snapshot.timeline.items;
  let at = items.length - 1;
  while (at >= 0 && items[at].id !== id) at--;
  if (at < 0) return; // removed by a later change of the same patch
  const item = items[at];
  const count = (matches: (other: (typeof items)[number]) => boolean) => items.reduce((n, other) => (matches(other) ? n + 1 : n), 0);
  switch (item.type) {
    case "message":
      if (!messages.has(item.messageId)) fail(`timeline item ${quote(item.id)} references a missing message ${quote(item.messageId)}`);
      break;
    case "tool": {
      if (!hasId(snapshot.tools, item.toolId)) fail(`timeline item ${quote(item.id)} references a missing tool ${quote(item.toolId)}`);
      const found = count((other) => other.type === "tool" && other.toolId === item.toolId);
      if (found !== 1) fail(`tool ${quote(item.toolId)} must appear exactly once in the timeline (found ${found})`);
      break;
    }
    case "operation": {
      if (!hasId(snapshot.operations, item.operationId)) fail(`timeline item ${quote(item.id)} references a missing operation ${quote(item.operationId)}`);
      const found = count((other) => other.type === "operation" && other.operationId === item.operationId);
      if (found !== 1) fail(`operation ${quote(item.operationId)} must appear exactly once in the timeline (found ${found})`);
      break;
    }
    case "notice":
      if (!subjectExists(snapshot, messages, item.notice.subject)) fail(`notice ${quote(item.id)} has a missing subject ${describeSubject(item.notice.subject)}`);
      break;
  }
}

/** Unique ids; only messages[0] may be the base system prompt (a system message without metadata). */
function indexMessages(list: MessageRecord[]): Map<string, MessageRecord> {
  const byId = new Map<string, MessageRecord>();
  list.forEach((record, index) => {
    if (byId.has(record.id)) fail(`message id ${quote(record.id)} appears more than once`);
    byId.set(record.id, record);
    if (index > 0 && record.message.role === "system" && !("metadata" in record.message)) {
      fail(
        `message ${quote(record.id)} at index ${index} is a system message without metadata (only messages[0] may be the base system prompt)`,
      );
    }
  });
  return byId;
}

function checkMapKeys(snapshot: Snapshot): void {
  const keyed = <V>(name: string, map: IdRecord<V>, idOf: (value: V) => string, idName: string) => {
    for (const [key, value] of Object.entries(map)) {
      if (idOf(value) !== key) fail(`${name} key ${quote(key)} differs from its ${idName} ${quote(idOf(value))}`);
    }
  };
  keyed("turns", snapshot.turns, (t) => t.userHistoryEntryId, "userHistoryEntryId");
  keyed("tools", snapshot.tools, (t) => t.id, "id");
  keyed("operations", snapshot.operations, (o) => o.id, "id");
  keyed("agents", snapshot.agents, (a) => a.id, "id");
  keyed("facets", snapshot.facets, (f) => f.id, "id");
  for (const tool of Object.values(snapshot.tools)) {
    if (tool.toolCallId !== tool.id)
      fail(`tool ${quote(tool.id)} has a different toolCallId ${quote(tool.toolCallId)}`);
  }
}

/**
 * Unique item ids, strictly increasing sequences no higher than the high-water mark, existing
 * targets, and exactly one item for every tool and every operation.
 */
function checkTimeline(snapshot: Snapshot, messages: Map<string, MessageRecord>): void {
  const { items, sequence: highWater } = snapshot.timeline;
  const ids = new Set<string>();
  const toolItems = new Map<string, number>();
  const operationItems = new Map<string, number>();
  let previous = 0;
  for (const item of items) {
    if (ids.has(item.id)) fail(`timeline item id ${quote(item.id)} appears more than once`);
    ids.add(item.id);
    if (item.sequence <= previous) {
      fail(`timeline item ${quote(item.id)} has sequence ${item.sequence}, not above the previous item's ${previous}`);
    }
    if (item.sequence > highWater) {
      fail(`timeline item ${quote(item.id)} has sequence ${item.sequence} above the high-water mark ${highWater}`);
    }
    previous = item.sequence;
    switch (item.type) {
      case "message":
        if (!messages.has(item.messageId))
          fail(`timeline item ${quote(item.id)} references a missing message ${quote(item.messageId)}`);
        break;
      case "tool":
        if (!hasId(snapshot.tools, item.toolId))
          fail(`timeline item ${quote(item.id)} references a missing tool ${quote(item.toolId)}`);
        toolItems.set(item.toolId, (toolItems.get(item.toolId) ?? 0) + 1);
        break;
      case "operation":
        if (!hasId(snapshot.operations, item.operationId)) {
          fail(`timeline item ${quote(item.id)} references a missing operation ${quote(item.operationId)}`);
        }
        operationItems.set(item.operationId, (operationItems.get(item.operationId) ?? 0) + 1);
        break;
      case "notice":
        if (!subjectExists(snapshot, messages, item.notice.subject)) {
          fail(`notice ${quote(item.id)} has a missing subject ${describeSubject(item.notice.subject)}`);
        }
        break;
    }
  }
  for (const id of Object.keys(snapshot.tools)) {
    const count = toolItems.get(id) ?? 0;
    if (count !== 1) fail(`tool ${quote(id)} must appear exactly once in the timeline (found ${count})`);
  }
  for (const id of Object.keys(snapshot.operations)) {
    const count = operationItems.get(id) ?? 0;
    if (count !== 1) fail(`operation ${quote(id)} must appear exactly once in the timeline (found ${count})`);
  }
}

/**
 * §5.6: the call (or streaming origin) points at the matching toolCall block, the result is a
 * matching toolResult message, and each facet is about this tool.
 */
function checkToolReferences(snapshot: Snapshot, tool: ToolRun, messages: MessageLookup): void {
  const position = tool.status === "streaming" ? tool.origin : tool.call;
  const label = tool.status === "streaming" ? "origin" : "call";
  const record = messages.get(position.messageId);
  if (!record) fail(`tool ${quote(tool.id)} ${label} references a missing message ${quote(position.messageId)}`);
  const payload = record.message;
  const block = payload.role === "assistant" ? payload.content[position.contentIndex] : undefined;
  if (!block || block.type !== "toolCall" || block.id !== tool.toolCallId) {
    fail(
      `tool ${quote(tool.id)} ${label} (message ${quote(position.messageId)}, content index ${position.contentIndex}) ` +
        `is not a toolCall block with id ${quote(tool.toolCallId)}`,
    );
  }
  if (tool.status !== "streaming" && tool.resultMessageId !== undefined) {
    const result = messages.get(tool.resultMessageId)?.message;
    if (!result || result.role !== "toolResult" || result.toolCallId !== tool.toolCallId) {
      fail(
        `tool ${quote(tool.id)} resultMessageId ${quote(tool.resultMessageId)} is not a toolResult message for this call`,
      );
    }
  }
  for (const facetId of tool.facetIds) {
    const facet = getById(snapshot.facets, facetId);
    if (!facet) fail(`tool ${quote(tool.id)} lists a missing facet ${quote(facetId)}`);
    if (facet.subject.type !== "tool" || facet.subject.id !== tool.id) {
      fail(`tool ${quote(tool.id)} lists facet ${quote(facetId)} whose subject is ${describeSubject(facet.subject)}`);
    }
  }
}

/** The checkpoint measures a finished, model-visible reply in the current model context. */
function checkUsageCheckpoint(snapshot: Snapshot, messages: MessageLookup): void {
  const checkpoint = snapshot.agentState.usageCheckpoint;
  if (!checkpoint) return;
  const where = `usage checkpoint message ${quote(checkpoint.historyEntryId)}`;
  const record = messages.get(checkpoint.historyEntryId);
  if (!record) fail(`${where} does not exist`);
  const payload = record.message;
  if (payload.role !== "assistant" || !("stopReason" in payload)) fail(`${where} is not a finished assistant message`);
  if (record.state !== "committed") fail(`${where} is ${record.state}, not committed`);
  if (!record.modelVisible) fail(`${where} is not model-visible`);
  if (payload.stopReason === "error" || payload.stopReason === "aborted")
    fail(`${where} stopped with ${payload.stopReason}`);
  if (checkpoint.modelContextKey !== snapshot.agentState.modelContextKey) {
    fail(
      `usage checkpoint modelContextKey ${quote(checkpoint.modelContextKey)} differs from agentState's ${quote(snapshot.agentState.modelContextKey)}`,
    );
  }
}

function subjectExists(snapshot: Snapshot, messages: MessageLookup, subject: Subject): boolean {
  switch (subject.type) {
    case "session":
      return true;
    case "message":
      return messages.has(subject.id);
    case "tool":
      return hasId(snapshot.tools, subject.id);
    case "agent":
      return hasId(snapshot.agents, subject.id);
    case "operation":
      return hasId(snapshot.operations, subject.id);
  }
}

const describeSubject = (subject: Subject): string =>
  subject.type === "session" ? "session" : `${subject.type} ${quote(subject.id)}`;
