import { arr, int, literal, nonEmpty, nullable, num, obj, oneOfStrings, opt, ref, since, str, union, until, type Schema } from "../schema.js";
import { goalSchema } from "./snapshot.js";

/**
 * The contents of a `session.delta` (spec §2.2, §6.1): the delta cause, a patch's change kinds and
 * the reset. Order inside `changes` matters and a patch is applied atomically; the applier, not the
 * schema, checks revisions, epochs and references.
 */

const change = (type: string, props: Record<string, unknown>, description: string): Schema =>
  obj({ type: literal(type), ...props }, { description });

export const changeDefinitions: Record<string, Schema> = {
  DeltaCause: union(
    obj({
      type: oneOfStrings([
        "user-message",
        since(14, "system-message", "arrived with intermediate system messages in v14"),
        "assistant-stream",
        "assistant-message",
        "tool-run",
        "tool-result",
        "notice",
        "agent-run",
        "maintenance",
        "configuration",
        until(15, "goal", "goals removed somewhere in 16–18"),
      ]),
    }),
    obj(
      {
        type: literal("compaction"),
        previousEpoch: int({ min: 1 }),
        epoch: int({ min: 1 }),
        kind: ref("CompactionKind"),
        cutType: oneOfStrings(["turn-boundary", "split-turn"]),
        retainedMessageCount: int({ min: 0 }),
      },
      { description: "Always a reset; epoch = previousEpoch + 1 and the reset timeline is in `epoch`." },
    ),
    obj(
      { type: literal("rewind"), epoch: int({ min: 1 }), cutoffSequence: int({ min: 0 }) },
      { description: "Always a reset in the same epoch; no remaining timeline item is past `cutoffSequence`." },
    ),
    obj({ type: literal("resync") }),
  ),

  Change: union(
    ref("AgentStateSetChange"),
    ref("LifecycleSetChange"),
    until(
      15,
      change("goal.set", { goal: nullable(goalSchema) }, "Replace the session goal."),
      "removed somewhere in 16–18",
    ),
    ref("CostSetChange"),
    ref("SettingsSetChange"),
    ref("TurnSetChange"),
    ref("MessageAppendChange"),
    ref("MessageReplaceChange"),
    ref("MessageContentAppendChange"),
    ref("TimelineAppendChange"),
    ref("TimelineRemoveChange"),
    ref("TimelineAdvanceChange"),
    ref("ToolSetChange"),
    ref("ToolRemoveChange"),
    ref("OperationSetChange"),
    ref("OperationRemoveChange"),
    ref("AgentSetChange"),
    ref("AgentRemoveChange"),
    ref("FacetSetChange"),
    ref("FacetRemoveChange"),
  ),

  AgentStateSetChange: change("agent-state.set", { agentState: ref("AgentState") }, "Replace agentState."),
  LifecycleSetChange: change("lifecycle.set", { lifecycle: ref("SessionLifecycle") }, "Replace lifecycle."),
  CostSetChange: change("cost.set", { costTotal: num({ min: 0 }) }, "Replace costTotal."),
  SettingsSetChange: change("settings.set", { settings: ref("Settings") }, "Replace the whole settings object."),
  TurnSetChange: change(
    "turn.set",
    { turn: ref("TurnRecord") },
    "Upsert a turn record by userHistoryEntryId; a settled record never changes.",
  ),
  MessageAppendChange: change("message.append", { message: ref("MessageRecord") }, "Push a message."),
  MessageReplaceChange: change(
    "message.replace",
    { message: ref("MessageRecord") },
    "Replace the message with the same id, or push it if missing.",
  ),
  MessageContentAppendChange: {
    ...change(
      "message.content.append",
      { messageId: nonEmpty(), text: opt(str()), thinking: opt(str()), timestamp: num() },
      "Stream text/thinking into a draft assistant message: thinking into the first thinking block " +
        "(created before the first text block if absent), text into the first text block (created at " +
        "the end if absent); the message timestamp becomes `timestamp`.",
    ),
    // At least one of text / thinking must be non-empty: reject "both absent or empty". Written as
    // `not` so the object's generated type stays a plain interface.
    not: {
      type: "object",
      properties: { text: { type: "string", maxLength: 0 }, thinking: { type: "string", maxLength: 0 } },
    },
  },
  TimelineAppendChange: change(
    "timeline.append",
    { item: ref("TimelineItem") },
    "Push an item; its sequence exceeds the high-water mark, which becomes item.sequence.",
  ),
  TimelineRemoveChange: change("timeline.remove", { id: nonEmpty() }, "Remove an item; the high-water mark stays."),
  TimelineAdvanceChange: change(
    "timeline.advance",
    { epoch: int({ min: 1 }), sequence: int({ min: 1 }) },
    "Raise the high-water mark in the active epoch (ephemeral notices consume sequence numbers).",
  ),
  ToolSetChange: change("tool.set", { tool: ref("ToolRun") }, "Upsert a tool run by id."),
  ToolRemoveChange: change("tool.remove", { id: nonEmpty() }, "Delete a tool run."),
  OperationSetChange: change("operation.set", { operation: ref("Operation") }, "Upsert an operation by id."),
  OperationRemoveChange: change("operation.remove", { id: nonEmpty() }, "Delete an operation."),
  AgentSetChange: change("agent.set", { agent: ref("AgentRun") }, "Upsert a subagent by id."),
  AgentRemoveChange: change("agent.remove", { id: nonEmpty() }, "Delete a subagent."),
  FacetSetChange: change("facet.set", { facet: ref("Facet") }, "Upsert a facet by id."),
  FacetRemoveChange: change("facet.remove", { id: nonEmpty() }, "Delete a facet."),

  SnapshotPatch: obj(
    { type: literal("snapshot.patch"), changes: arr(ref("Change")) },
    { description: "Apply every change in order as one atomic unit." },
  ),

  SnapshotReset: obj(
    { type: literal("snapshot.reset"), snapshot: ref("Snapshot") },
    { description: "Replace the snapshot wholesale; snapshot.revision equals the message's toRevision." },
  ),
};
