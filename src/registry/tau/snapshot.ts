import { any, arr, bool, byVersion, describe, int, literal, nonEmpty, nullable, num, obj, oneOfStrings, opt, record, ref, since, singleLine, str, union, until, type Schema } from "../schema.js";
import { anyInt, autoCompactThreshold, nonEmptySingleLine } from "./common.js";

/**
 * `SessionProtocolSnapshot` and everything nested in it (spec §5.1–§5.11). Invariants that span
 * collections (unique ids, map keys equal to embedded ids, references between messages, tools,
 * operations, facets and the timeline, strictly increasing sequences) are the delta applier's job,
 * not the schema's.
 */

export const NOTICE_TITLE_MAX_CHARS = 512;
export const NOTICE_CONTENT_MAX_ENTRIES = 16;
export const NOTICE_CONTENT_ENTRY_MAX_CHARS = 4096;
export const MAX_SUBAGENT_ACTIVITIES = 64;
const SUBAGENT_SHORT_TEXT_BYTES = 512;
const SUBAGENT_TOOL_SUBJECT_BYTES = 4 * 1024;
const SUBAGENT_ASSISTANT_TEXT_BYTES = 32 * 1024;

/** Snapshot maps are keyed by non-blank ids. */
const idMap = (values: unknown): Schema => record(values, { keys: nonEmpty() });

const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** Shared by the snapshot's `goal` and the `goal.set` change; both are gone by v18. */
export const goalSchema: Schema = obj({ objective: nonEmpty(), status: oneOfStrings(["active", "blocked"]) });

/** Subagent "short text": one line, not blank, ≤ 512 UTF-8 bytes (bounded here by characters). */
const subagentShortText = (): Schema =>
  nonEmptySingleLine({
    maxLength: SUBAGENT_SHORT_TEXT_BYTES,
    description: "One line, not blank, at most 512 UTF-8 bytes (maxLength bounds characters, so it is looser).",
  });

const timelineItemBase = { id: nonEmpty(), sequence: int({ min: 1 }), createdAt: num({ min: 0 }) };
const operationBase = {
  id: nonEmpty(),
  kind: oneOfStrings(["auto-compaction", "manual-compaction", "reload", "rewind"]),
  startedAt: num(),
};
const toolRunBase = { id: nonEmpty(), toolCallId: nonEmpty(), toolName: nonEmpty(), facetIds: arr(nonEmpty()) };
/** How a dispatched tool run can end; a run is `queued` or `running` before that. */
const TOOL_OUTCOMES = ["succeeded", "failed", "blocked", "cancelled"];
const runStateBase = { revision: int({ min: 1 }), startedAt: num(), interruptRequested: bool() };

export const snapshotDefinitions: Record<string, Schema> = {
  Snapshot: obj(
    {
      sessionId: nonEmpty(),
      attributes: ref("Attributes"),
      createdAt: num({ min: 0 }),
      revision: int({ min: 1 }),
      agentState: ref("AgentState"),
      lifecycle: ref("SessionLifecycle"),
      goal: until(15, nullable(goalSchema), "goals removed somewhere in 16–18"),
      costTotal: num({ min: 0 }),
      settings: ref("Settings"),
      bootstrap: ref("Bootstrap"),
      catalog: ref("Catalog"),
      executionEnvironment: ref("ExecutionEnvironmentSnapshot"),
      messages: arr(ref("MessageRecord")),
      turns: idMap(ref("TurnRecord")),
      timeline: ref("Timeline"),
      tools: idMap(ref("ToolRun")),
      operations: idMap(ref("Operation")),
      agents: idMap(ref("AgentRun")),
      facets: idMap(ref("Facet")),
    },
    { description: "The complete recoverable state of one session (SessionProtocolSnapshot)." },
  ),

  // §5.1 ────────────────────────────────────────────────────────────────────────────────────────

  Settings: obj({
    autoCompactThresholdTokens: since(16, autoCompactThreshold(), "added somewhere in 16–18"),
    effectiveAutoCompactThresholdTokens: since(
      16,
      { ...anyInt(), description: "min(configured ?? ∞, model.contextWindow − 16384): the value clients display." },
      "added somewhere in 16–18",
    ),
    personaId: nonEmpty(),
    reasoning: opt(ref("Reasoning")),
    serviceTier: opt(ref("ServiceTier")),
  }),

  ServiceTier: oneOfStrings(["priority", "flex"]),

  Bootstrap: obj({ model: ref("ModelInfo"), prompt: ref("PromptComposition") }),

  ModelInfo: obj({
    id: nonEmpty(),
    name: nonEmpty(),
    api: nonEmpty(),
    provider: nonEmpty(),
    baseUrl: str(),
    reasoning: bool(),
    thinkingLevelMap: opt(record(nullable(str()), { keys: oneOfStrings(THINKING_LEVELS) })),
    input: arr(oneOfStrings(["text", "image"])),
    cost: ref("ModelCost"),
    contextWindow: int({ min: 1 }),
    maxTokens: int({ min: 1 }),
    compat: opt(any()),
  }),

  ModelCost: obj({
    input: num({ min: 0 }),
    output: num({ min: 0 }),
    cacheRead: num({ min: 0 }),
    cacheWrite: num({ min: 0 }),
    tiers: opt(arr(ref("ModelCostTier"))),
  }),

  ModelCostTier: obj({
    inputTokensAbove: int({ min: 0 }),
    input: num({ min: 0 }),
    output: num({ min: 0 }),
    cacheRead: num({ min: 0 }),
    cacheWrite: num({ min: 0 }),
  }),

  PromptComposition: obj({
    environmentTag: nonEmpty(),
    subagentPrompts: until(14, record(str()), "replaced by subagentSystemPrompt in v15"),
    subagentSystemPrompt: since(
      15,
      opt(nonEmpty({ description: "Present when subagent launches are enabled." })),
      "added in v15",
    ),
  }),

  Catalog: obj({
    personas: arr(ref("Persona")),
    prompts: arr(ref("PromptTemplate")),
    skills: arr(ref("Skill")),
    mcpServers: since(16, arr(nonEmpty()), "added somewhere in 16–18; enabled server names only, not connection state"),
  }),

  Persona: obj({
    id: nonEmpty(),
    label: nonEmpty(),
    description: opt(str()),
    allowedReasoningLevels: opt(arr(ref("Reasoning"))),
    subagents: until(
      14,
      opt(
        record(obj({ description: opt(str()), tools: opt(arr(nonEmpty())), launchModels: opt(arr(nonEmpty())) }), {
          keys: nonEmpty(),
        }),
      ),
      "replaced by subagentLaunchModels in v15",
    ),
    subagentLaunchModels: since(15, arr(nonEmpty()), "added in v15"),
    tools: opt(arr(nonEmpty())),
    skills: until(15, union(literal("*"), arr(nonEmpty())), "removed somewhere in 16–18"),
    source: oneOfStrings(["builtin", "user", "project"]),
  }),

  // Prompt metadata only; bodies are loaded lazily with session.resolvePrompt.
  // Until 15 the label was optional and a description existed; since 16–18 the label is required.
  PromptTemplate: {
    ...obj({
      id: nonEmpty(),
      label: byVersion(until(15, str()), since(16, nonEmpty())),
      description: until(15, opt(str()), "removed somewhere in 16–18"),
    }),
    required: byVersion(until(15, ["id"]), since(16, ["id", "label"])),
  },

  Skill: obj({ name: nonEmpty(), description: nonEmpty(), path: nonEmpty() }),

  AgentState: obj({
    revision: int({ min: 0 }),
    modelContextKey: nonEmpty(),
    usageCheckpoint: opt(obj({ historyEntryId: nonEmpty(), modelContextKey: nonEmpty(), tokens: int({ min: 0 }) })),
  }),

  // §5.4 ────────────────────────────────────────────────────────────────────────────────────────

  TurnRecord: union(
    obj({ userHistoryEntryId: nonEmpty(), state: literal("running") }),
    obj({ userHistoryEntryId: nonEmpty(), state: literal("settled"), outcome: ref("TurnOutcome") }),
  ),

  // §5.5 ────────────────────────────────────────────────────────────────────────────────────────

  Timeline: obj({
    epoch: int({ min: 1 }),
    sequence: int({ min: 0 }),
    items: arr(ref("TimelineItem")),
  }),

  TimelineItem: union(
    ref("MessageTimelineItem"),
    ref("ToolTimelineItem"),
    ref("NoticeTimelineItem"),
    ref("OperationTimelineItem"),
  ),

  MessageTimelineItem: obj({ type: literal("message"), ...timelineItemBase, messageId: nonEmpty() }),
  ToolTimelineItem: obj({ type: literal("tool"), ...timelineItemBase, toolId: nonEmpty() }),
  NoticeTimelineItem: obj({ type: literal("notice"), ...timelineItemBase, notice: ref("Notice") }),
  OperationTimelineItem: obj({ type: literal("operation"), ...timelineItemBase, operationId: nonEmpty() }),

  Notice: obj({
    kind: nonEmpty({
      pattern: "^[a-z0-9-]+(?:\\.[a-z0-9-]+)+$",
      description: "Lowercase dotted identifier, e.g. `compaction.failed`.",
    }),
    version: int({ min: 1 }),
    severity: ref("Severity"),
    subject: ref("Subject"),
    presentation: obj({
      title: nonEmptySingleLine({ maxLength: NOTICE_TITLE_MAX_CHARS }),
      content: opt(
        arr(str({ maxLength: NOTICE_CONTENT_ENTRY_MAX_CHARS }), { min: 1, max: NOTICE_CONTENT_MAX_ENTRIES }),
      ),
    }),
    data: record(any()),
  }),

  Severity: oneOfStrings(["info", "warn", "error"]),

  Subject: union(
    obj({ type: literal("session") }),
    obj({ type: oneOfStrings(["message", "tool", "agent", "operation"]), id: nonEmpty() }),
  ),

  // §5.6 ────────────────────────────────────────────────────────────────────────────────────────

  ToolRun: union(ref("StreamingToolRun"), ref("DispatchedToolRun")),

  StreamingToolRun: obj(
    { ...toolRunBase, status: literal("streaming"), origin: ref("ToolPosition") },
    { description: "A tool call whose arguments are still streaming inside a draft assistant message." },
  ),

  DispatchedToolRun: obj({
    ...toolRunBase,
    status: oneOfStrings(["queued", "running", ...TOOL_OUTCOMES]),
    call: ref("ToolPosition"),
    startedAt: opt(num()),
    finishedAt: opt(num()),
    resultMessageId: opt(nonEmpty()),
    summary: opt(str()),
    error: opt(str()),
  }),

  ToolPosition: obj({ messageId: nonEmpty(), contentIndex: int({ min: 0 }) }),

  ToolOutcome: describe("How a finished tool run ended.", oneOfStrings(TOOL_OUTCOMES)),

  // §5.7 ────────────────────────────────────────────────────────────────────────────────────────

  Operation: union(
    obj({ ...operationBase, status: literal("running") }),
    obj({ ...operationBase, status: literal("succeeded"), finishedAt: num() }),
    obj({ ...operationBase, status: literal("failed"), finishedAt: num(), error: nonEmpty() }),
    obj({ ...operationBase, status: literal("skipped"), finishedAt: num(), reason: literal("no-eligible-history") }),
    obj({
      ...operationBase,
      status: literal("cancelled"),
      finishedAt: num(),
      reason: oneOfStrings(["interrupted", "session-recovered"]),
    }),
  ),

  // §5.8 ────────────────────────────────────────────────────────────────────────────────────────

  AgentRun: {
    ...obj(
      {
        id: nonEmpty(),
        name: until(14, nonEmpty(), "subagent worker names dropped in v15"),
        title: nonEmpty(),
        availability: oneOfStrings(["running", "idle"]),
        model: obj({ provider: nonEmpty(), id: nonEmpty(), reasoning: ref("Reasoning") }),
        workingDirectory: nonEmpty(),
        createdAt: num(),
        run: ref("RunState"),
        costTotal: num(),
        usage: ref("AgentUsage"),
      },
      { description: "A supervised subagent. `availability` is `running` exactly when `run.status` is `running`." },
    ),
    if: { properties: { run: { type: "object", properties: { status: { const: "running" } } } } },
    then: { properties: { availability: { const: "running" } } },
    else: { properties: { availability: { const: "idle" } } },
  },

  AgentUsage: obj({
    input: num(),
    output: num(),
    cacheRead: num(),
    cacheWrite: num(),
    contextWindowUsageTokens: num(),
    contextWindow: num(),
  }),

  RunState: union(
    obj({ ...runStateBase, status: literal("running") }),
    obj({ ...runStateBase, status: literal("succeeded"), finishedAt: num(), response: str() }),
    obj({
      ...runStateBase,
      status: literal("failed"),
      finishedAt: num(),
      failure: union(
        obj({ kind: oneOfStrings(["auto-compaction-failed", "model-subturn-limit", "runtime-error"]), message: str() }),
        obj({ kind: literal("provider-error"), message: str(), stopReason: str() }),
      ),
    }),
    obj({
      ...runStateBase,
      status: literal("interrupted"),
      finishedAt: num(),
      failure: obj({ kind: literal("interrupted"), message: str() }),
    }),
  ),

  Facet: obj(
    { id: nonEmpty(), subject: ref("Subject"), kind: nonEmpty(), version: int({ min: 1 }), data: record(any()) },
    { description: "Versioned client-facing metadata; ignore unknown kinds and versions." },
  ),

  // §5.11 ───────────────────────────────────────────────────────────────────────────────────────

  PendingUserMessage: obj({ id: nonEmpty(), mode: oneOfStrings(["queue", "steer"]), text: nonEmpty() }),

  PendingUserMessagesState: obj(
    { revision: int({ min: 1 }), messages: arr(ref("PendingUserMessage")) },
    { description: "Boundary steering first, then idle-queued messages; ids are unique." },
  ),

  SubagentActivitiesState: obj({
    revision: int({ min: 1 }),
    agents: idMap(ref("SubagentActivitiesAgentState")),
  }),

  SubagentActivitiesAgentState: obj({
    runRevision: int({ min: 1 }),
    activities: arr(ref("Activity"), { max: MAX_SUBAGENT_ACTIVITIES }),
  }),

  Activity: union(
    obj({
      type: literal("assistant"),
      text: nonEmpty({
        maxLength: SUBAGENT_ASSISTANT_TEXT_BYTES,
        description: "At most 32 KiB of UTF-8 (maxLength bounds characters, so it is looser).",
      }),
    }),
    obj({
      type: literal("tool"),
      toolName: subagentShortText(),
      outcome: ref("ToolOutcome"),
      presentation: ref("ActivityToolPresentation"),
    }),
    obj({
      type: literal("notice"),
      severity: ref("Severity"),
      title: subagentShortText(),
      content: opt(describe("At most 32 KiB of UTF-8 in total (a sum JSON Schema cannot bound).", arr(str()))),
    }),
  ),

  ActivityToolPresentation: obj({
    action: subagentShortText(),
    operation: opt(subagentShortText()),
    subject: nonEmpty({
      maxLength: SUBAGENT_TOOL_SUBJECT_BYTES,
      description: "At most 4 KiB of UTF-8 (maxLength bounds characters, so it is looser).",
    }),
    subjectWrap: ref("TextWrap"),
    details: describe(
      "Detail texts total at most 32 KiB of UTF-8 (a sum JSON Schema cannot bound).",
      arr(obj({ text: singleLine(), tone: opt(ref("DetailTone")), wrap: ref("TextWrap") })),
    ),
    metadata: describe(
      "Metadata texts total at most 8 KiB of UTF-8 (a sum JSON Schema cannot bound).",
      arr(singleLine()),
    ),
  }),

  TextWrap: oneOfStrings(["word", "character"]),
  DetailTone: oneOfStrings(["added", "removed"]),
};
