import { opt, type Schema } from "../schema.js";
import { acpObj, arrayOf, arrayOrNull, closedStrings, number, openStrings, orNull, ref, refOrNull, string, tagged, unsigned } from "./shapes.js";

/**
 * `session/update` (protocol §7–§8): what the agent streams about a session, tagged by
 * `sessionUpdate`: message and thought chunks, tool calls and their updates, the plan, commands,
 * mode and configuration changes, session info, usage, notices and compaction.
 */

/** Update kinds, each with the type holding its fields. */
export const SESSION_UPDATE_KINDS = {
  user_message_chunk: "ContentChunk",
  agent_message_chunk: "ContentChunk",
  agent_thought_chunk: "ContentChunk",
  tool_call: "ToolCall",
  tool_call_update: "ToolCallUpdate",
  plan: "Plan",
  available_commands_update: "AvailableCommandsUpdate",
  current_mode_update: "CurrentModeUpdate",
  config_option_update: "ConfigOptionUpdate",
  session_info_update: "SessionInfoUpdate",
  usage_update: "UsageUpdate",
  notice: "Notice",
  compaction_update: "CompactionUpdate",
  compaction_summary_chunk: "CompactionSummaryChunk",
} as const;

export const TOOL_KINDS = ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"] as const;
export const TOOL_CALL_STATUSES = ["pending", "in_progress", "completed", "failed"] as const;

export const updateDefinitions: Record<string, Schema> = {
  SessionUpdate: { oneOf: Object.entries(SESSION_UPDATE_KINDS).map(([kind, type]) => tagged("sessionUpdate", kind, type)) },

  // ── Messages ──
  ContentChunk: acpObj({ content: ref("ContentBlock"), messageId: opt(refOrNull("MessageId")) }),
  MessageId: string(),

  // ── Tool calls ──
  ToolCall: acpObj({
    toolCallId: ref("ToolCallId"),
    title: string(),
    name: opt(orNull("string")),
    kind: opt(ref("ToolKind")),
    status: opt(ref("ToolCallStatus")),
    content: opt(arrayOf(ref("ToolCallContent"))),
    locations: opt(arrayOf(ref("ToolCallLocation"))),
    rawInput: opt({}),
    rawOutput: opt({}),
  }),
  ToolCallUpdate: acpObj({
    toolCallId: ref("ToolCallId"),
    kind: opt(refOrNull("ToolKind")),
    status: opt(refOrNull("ToolCallStatus")),
    title: opt(orNull("string")),
    name: opt(orNull("string")),
    content: opt(arrayOrNull(ref("ToolCallContent"))),
    locations: opt(arrayOrNull(ref("ToolCallLocation"))),
    rawInput: opt({}),
    rawOutput: opt({}),
  }),
  ToolCallId: string(),
  ToolKind: closedStrings(...TOOL_KINDS),
  ToolCallStatus: closedStrings(...TOOL_CALL_STATUSES),
  ToolCallContent: { oneOf: [tagged("type", "content", "Content"), tagged("type", "diff", "Diff"), tagged("type", "terminal", "Terminal")] },
  Content: acpObj({ content: ref("ContentBlock") }),
  Diff: acpObj({ path: string(), oldText: opt(orNull("string")), newText: string() }),
  Terminal: acpObj({ terminalId: ref("TerminalId") }),
  TerminalId: string(),
  ToolCallLocation: acpObj({ path: string(), line: opt(orNull("integer", { minimum: 0 })) }),

  // ── Plan ──
  Plan: acpObj({ entries: arrayOf(ref("PlanEntry")) }),
  PlanEntry: acpObj({ content: string(), priority: ref("PlanEntryPriority"), status: ref("PlanEntryStatus") }),
  PlanEntryPriority: closedStrings("high", "medium", "low"),
  PlanEntryStatus: closedStrings("pending", "in_progress", "completed"),

  // ── Commands, mode, configuration, session info ──
  AvailableCommandsUpdate: acpObj({ availableCommands: arrayOf(ref("AvailableCommand")) }),
  AvailableCommand: acpObj({ name: string(), description: string(), input: opt(refOrNull("AvailableCommandInput")) }),
  AvailableCommandInput: { anyOf: [ref("UnstructuredCommandInput")] },
  UnstructuredCommandInput: acpObj({ hint: string() }),
  CurrentModeUpdate: acpObj({ currentModeId: ref("SessionModeId") }),
  ConfigOptionUpdate: acpObj({ configOptions: arrayOf(ref("SessionConfigOption")) }),
  SessionInfoUpdate: acpObj({ title: opt(orNull("string")), updatedAt: opt(orNull("string")) }),

  // ── Usage ──
  UsageUpdate: acpObj({ used: unsigned(), size: unsigned(), cost: opt(refOrNull("Cost")) }),
  Cost: acpObj({ amount: number(), currency: string() }),

  // ── Notices and compaction (only for clients that advertise them) ──
  Notice: acpObj({ severity: ref("NoticeSeverity"), title: { type: "string", minLength: 1 }, description: opt(orNull("string")) }),
  NoticeSeverity: openStrings("info", "warning", "error"),
  CompactionId: string(),
  CompactionStatus: openStrings("in_progress", "completed", "failed", "cancelled"),
  CompactionUpdate: acpObj({
    compactionId: ref("CompactionId"),
    status: ref("CompactionStatus"),
    summary: opt(arrayOrNull(ref("ContentBlock"))),
    error: opt(orNull("string")),
  }),
  CompactionSummaryChunk: acpObj({ compactionId: ref("CompactionId"), content: ref("ContentBlock") }),
};
