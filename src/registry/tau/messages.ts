import { any, anyOf, arr, bool, describe, int, literal, nonEmpty, num, obj, oneOfStrings, opt, record, ref, since, str, union, type Schema } from "../schema.js";

/**
 * Model messages as they appear in snapshots, deltas and `session.sample` (spec §5.2, §5.3). The
 * provider-neutral shapes come from Tau's model library and strip unknown fields; only the two
 * system-message shapes (and the intermediate message's metadata) are strict, so a plain system
 * message and an intermediate one can never be confused.
 */

const SYSTEM_MESSAGE_METADATA_TYPES = ["instruction", "auto-compaction-continuation"];

export const messageDefinitions: Record<string, Schema> = {
  TextOrImageContent: describe("A content block of a user or tool-result message.", union(ref("TextContent"), ref("ImageContent"))),

  AssistantContent: describe(
    "A content block of an assistant message.",
    union(ref("TextContent"), ref("ThinkingContent"), ref("ToolCall")),
  ),

  TextContent: obj({ type: literal("text"), text: str(), textSignature: opt(str()) }),

  ImageContent: obj({
    type: literal("image"),
    data: str({ description: "Base64 image bytes (not re-validated inside model messages)." }),
    mimeType: nonEmpty(),
  }),

  ThinkingContent: obj({
    type: literal("thinking"),
    thinking: str(),
    thinkingSignature: opt(str()),
    redacted: opt(bool()),
  }),

  ToolCall: obj({
    type: literal("toolCall"),
    id: nonEmpty(),
    name: nonEmpty(),
    arguments: record(any()),
    thoughtSignature: opt(str()),
  }),

  UserMessage: obj({
    role: literal("user"),
    content: union(str(), arr(ref("TextOrImageContent"))),
    timestamp: num(),
  }),

  ModelUsage: obj({
    input: int({ min: 0 }),
    output: int({ min: 0 }),
    cacheRead: int({ min: 0 }),
    cacheWrite: int({ min: 0 }),
    cacheWrite1h: opt(int({ min: 0 })),
    reasoning: opt(int({ min: 0 })),
    totalTokens: int({ min: 0 }),
    cost: obj({
      input: num({ min: 0 }),
      output: num({ min: 0 }),
      cacheRead: num({ min: 0 }),
      cacheWrite: num({ min: 0 }),
      total: num({ min: 0 }),
    }),
  }),

  ModelDiagnostic: obj({
    type: str(),
    timestamp: num(),
    error: opt(
      obj({
        name: opt(str()),
        message: str(),
        stack: opt(str()),
        code: opt(union(str(), num())),
      }),
    ),
    details: opt(record(any())),
  }),

  StopReason: oneOfStrings(["stop", "length", "toolUse", "error", "aborted"]),

  AssistantMessage: obj({
    role: literal("assistant"),
    content: arr(ref("AssistantContent")),
    api: nonEmpty(),
    provider: nonEmpty(),
    model: nonEmpty(),
    responseModel: opt(nonEmpty()),
    responseId: opt(nonEmpty()),
    diagnostics: opt(arr(ref("ModelDiagnostic"))),
    usage: ref("ModelUsage"),
    stopReason: ref("StopReason"),
    errorMessage: opt(str()),
    timestamp: num(),
  }),

  ToolResultMessage: obj({
    role: literal("toolResult"),
    toolCallId: nonEmpty(),
    toolName: nonEmpty(),
    content: arr(ref("TextOrImageContent")),
    details: opt(any()),
    addedToolNames: opt(arr(nonEmpty())),
    isError: bool(),
    timestamp: num(),
  }),

  SystemPromptMessage: obj(
    { role: literal("system"), content: str(), timestamp: num() },
    { strict: true, description: "The persona/base system prompt; only ever messages[0] of a snapshot." },
  ),

  SystemMessageMetadata: obj(
    { type: oneOfStrings(SYSTEM_MESSAGE_METADATA_TYPES), version: literal(1) },
    { strict: true },
  ),

  IntermediateSystemMessage: obj(
    { role: literal("system"), content: str(), timestamp: num(), metadata: ref("SystemMessageMetadata") },
    {
      strict: true,
      description: "A later system message: model-visible, recoverable, added without a turn record or timeline item.",
    },
  ),

  DraftAssistantMessage: obj(
    { role: literal("assistant"), content: arr(ref("AssistantContent")), timestamp: num() },
    { description: "An assistant message still streaming: no usage or stop reason yet." },
  ),

  // anyOf, not oneOf: a finished assistant message also satisfies the (stripping) draft shape.
  MessagePayload: anyOf(
    ref("SystemPromptMessage"),
    since(14, ref("IntermediateSystemMessage"), "intermediate system messages added in v14"),
    ref("UserMessage"),
    ref("AssistantMessage"),
    ref("ToolResultMessage"),
    ref("DraftAssistantMessage"),
  ),

  MessageState: oneOfStrings(["draft", "committed", "interrupted", "discarded"]),

  MessageRecord: obj(
    { id: nonEmpty(), state: ref("MessageState"), modelVisible: bool(), message: ref("MessagePayload") },
    { description: "One entry of snapshot.messages. Render from the timeline, not from this list." },
  ),

  // A plain system message is not allowed here; it belongs in `systemPrompt`.
  SampleMessage: union(
    since(14, ref("IntermediateSystemMessage"), "intermediate system messages added in v14"),
    ref("UserMessage"),
    ref("AssistantMessage"),
    ref("ToolResultMessage"),
  ),

  SampleTool: obj({ name: nonEmpty(), description: str(), parameters: record(any()) }),
};
