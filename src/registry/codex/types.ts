import {
  any,
  arr,
  bool,
  describe,
  int,
  literal,
  nullable,
  obj,
  oneOfStrings,
  opt,
  record,
  ref,
  str,
  union,
  type Schema,
} from "../schema.js";

/**
 * The shared Codex app-server v2 types the gateway's methods, notifications and server requests
 * carry. Names, fields and enum values are those of the official schema (`codex app-server
 * generate-json-schema`, @openai/codex 0.169.0); where the official type has many members the
 * gateway never sends (thread items, errors), only the ones it sends are listed, and params accept
 * the fields the gateway does not read as unknown fields. The string lists are exported as
 * constants too, so code branches on the values the schema enforces.
 */

export const ASK_FOR_APPROVAL_POLICIES = ["untrusted", "on-request", "never"] as const;
export const SANDBOX_MODES = ["read-only", "workspace-write", "danger-full-access"] as const;
export const APPROVALS_REVIEWERS = ["user", "auto_review", "guardian_subagent"] as const;
export const THREAD_ACTIVE_FLAGS = ["waitingOnApproval", "waitingOnUserInput"] as const;
export const SESSION_SOURCES = ["cli", "vscode", "exec", "appServer", "unknown"] as const;
export const THREAD_SOURCE_KINDS = ["cli", "vscode", "exec", "appServer", "subAgent", "subAgentReview", "subAgentCompact", "subAgentThreadSpawn", "subAgentOther", "unknown"] as const;
export const COLLAB_AGENT_TOOLS = ["spawnAgent", "sendInput", "resumeAgent", "wait", "closeAgent", "sendMessage", "followupTask", "interruptAgent", "listAgents"] as const;
export const COLLAB_AGENT_STATUSES = ["pendingInit", "running", "interrupted", "completed", "errored", "shutdown", "notFound"] as const;
export const COLLAB_TOOL_CALL_STATUSES = ["inProgress", "completed", "failed", "interrupted"] as const;
export const SUB_AGENT_ACTIVITY_KINDS = ["started", "interacted", "interrupted", "completed"] as const;
export const TURN_STATUSES = ["completed", "interrupted", "failed", "inProgress"] as const;
export const COMMAND_EXECUTION_STATUSES = ["inProgress", "completed", "failed", "declined"] as const;
export const TOOL_CALL_STATUSES = ["inProgress", "completed", "failed"] as const;
export const TURN_PLAN_STEP_STATUSES = ["pending", "inProgress", "completed"] as const;
export const INPUT_MODALITIES = ["text", "image", "audio"] as const;
export const MODE_KINDS = ["plan", "default"] as const;
export const MESSAGE_PHASES = ["commentary", "partial_answer", "final_answer"] as const;
export const CODEX_ERROR_INFO_KINDS = [
  "contextWindowExceeded",
  "sessionBudgetExceeded",
  "usageLimitExceeded",
  "rateLimitExceeded",
  "flexUnavailable",
  "serverOverloaded",
  "modelNotFound",
  "policyCapacityUnavailable",
  "cyberPolicy",
  "misalignmentPolicyViolation",
  "tooManyDenials",
  "internalServerError",
  "unauthorized",
  "badRequest",
  "threadRollbackFailed",
  "sandboxError",
  "other",
] as const;
/** Decisions a client may answer item/commandExecution/requestApproval with, as plain strings. */
export const COMMAND_APPROVAL_DECISIONS = ["accept", "acceptForSession", "decline", "cancel"] as const;

/** `{type: "<name>", …fields}`: one member of a union discriminated by `type`. */
const tagged = (type: string, fields: Record<string, unknown> = {}, description?: string): Schema =>
  obj({ type: literal(type), ...fields }, description ? { description } : {});

const epochSeconds = (description: string) => describe(description, int({ min: 0 }));
const nullableString = (description?: string) => nullable(str(description ? { description } : {}));

export const typeDefinitions: Record<string, Schema> = {
  // ── Handshake ──
  ClientInfo: obj({ name: str(), version: str(), title: opt(nullableString()) }),
  InitializeCapabilities: obj(
    {
      experimentalApi: opt(describe("Opts in to experimental methods, fields and server requests (default false).", bool())),
      requestAttestation: opt(bool()),
      requiredHumanApproval: opt(bool()),
      optOutNotificationMethods: opt(describe("Notifications the connection does not want.", nullable(arr(str())))),
    },
    { description: "What the client supports; unknown capabilities are ignored." },
  ),

  // ── Approval and sandbox settings ──
  AskForApproval: describe(
    "When the agent asks before acting: untrusted and on-request ask, never does not.",
    union(
      oneOfStrings(ASK_FOR_APPROVAL_POLICIES),
      obj(
        {
          granular: obj({
            sandbox_approval: bool(),
            rules: bool(),
            mcp_elicitations: bool(),
            skill_approval: opt(bool()),
            request_permissions: opt(bool()),
          }),
        },
        { strict: true },
      ),
    ),
  ),
  SandboxMode: oneOfStrings(SANDBOX_MODES),
  NetworkAccess: oneOfStrings(["restricted", "enabled"]),
  SandboxPolicy: union(
    tagged("dangerFullAccess"),
    tagged("readOnly", { networkAccess: opt(bool()) }),
    tagged("externalSandbox", { networkAccess: opt(ref("NetworkAccess")) }),
    tagged("workspaceWrite", {
      writableRoots: opt(arr(str())),
      networkAccess: opt(bool()),
      excludeTmpdirEnvVar: opt(bool()),
      excludeSlashTmp: opt(bool()),
    }),
  ),
  ApprovalsReviewer: oneOfStrings(APPROVALS_REVIEWERS),
  ReasoningEffort: str({ minLength: 1, description: "A reasoning effort level, e.g. medium." }),

  // ── Threads ──
  ThreadActiveFlag: oneOfStrings(THREAD_ACTIVE_FLAGS),
  ThreadStatus: union(
    tagged("notLoaded"),
    tagged("idle"),
    tagged("systemError"),
    tagged("active", { activeFlags: arr(ref("ThreadActiveFlag")) }),
  ),
  SessionSource: describe(
    "Where the thread was started; the gateway reports appServer, and subAgent (thread_spawn) for the child thread of a Tau sub-agent.",
    union(oneOfStrings(SESSION_SOURCES), obj({ custom: str() }, { strict: true }), obj({ subAgent: ref("SubAgentSource") }, { strict: true })),
  ),
  SubAgentSource: union(
    oneOfStrings(["review", "compact", "memory_consolidation"]),
    obj(
      {
        thread_spawn: obj({
          parent_thread_id: str(),
          depth: int({ min: -2147483648, max: 2147483647 }),
          agent_nickname: opt(nullableString()),
          agent_path: opt(nullableString()),
          agent_role: opt(nullableString()),
        }),
      },
      { strict: true },
    ),
    obj({ other: str() }, { strict: true }),
  ),
  ThreadSourceKind: oneOfStrings(THREAD_SOURCE_KINDS),
  Thread: obj(
    {
      id: str(),
      sessionId: str(),
      preview: str({ description: "The first user message, shortened." }),
      ephemeral: bool(),
      modelProvider: str(),
      createdAt: epochSeconds("Unix seconds."),
      updatedAt: epochSeconds("Unix seconds."),
      status: ref("ThreadStatus"),
      cwd: str({ description: "Absolute path." }),
      cliVersion: str(),
      source: ref("SessionSource"),
      turns: describe("Empty unless the method says it includes turns.", arr(ref("Turn"))),
      projectId: nullableString(),
      path: opt(nullableString()),
      name: opt(nullableString()),
      model: opt(nullableString()),
      parentThreadId: opt(nullableString("The parent thread, for a sub-agent's thread.")),
      agentNickname: opt(nullableString("A sub-agent's name (its Tau title).")),
      agentRole: opt(nullableString()),
    },
    { description: "A thread is one Tau session (its id is the session id), or one Tau sub-agent of a session (its id is the sub-agent's)." },
  ),

  // ── Turns ──
  TurnStatus: oneOfStrings(TURN_STATUSES),
  CodexErrorInfo: union(
    oneOfStrings(CODEX_ERROR_INFO_KINDS),
    literal("inferenceHookDenied"),
    describe("The structured kinds (httpConnectionFailed, …), which the gateway does not send.", { type: "object" }),
  ),
  TurnError: obj({
    message: str(),
    codexErrorInfo: opt(nullable(ref("CodexErrorInfo"))),
    additionalDetails: opt(nullableString()),
  }),
  Turn: obj({
    id: str(),
    items: arr(ref("ThreadItem")),
    status: ref("TurnStatus"),
    error: opt(nullable(ref("TurnError"))),
    startedAt: opt(nullable(int({ min: 0 }))),
    completedAt: opt(nullable(int({ min: 0 }))),
    durationMs: opt(nullable(int({ min: 0 }))),
    itemsView: opt(ref("TurnItemsView")),
  }),
  TurnItemsView: describe(
    "How much of a turn's items a payload holds: none (notLoaded), a display summary, or all of them (full, the default).",
    oneOfStrings(["notLoaded", "summary", "full"]),
  ),
  SortDirection: oneOfStrings(["asc", "desc"]),

  // ── Input ──
  ByteRange: obj({ start: int({ min: 0 }), end: int({ min: 0 }) }),
  TextElement: obj({ byteRange: ref("ByteRange"), placeholder: opt(nullableString()) }),
  ImageDetail: oneOfStrings(["auto", "low", "high", "original"]),
  UserInput: union(
    tagged("text", { text: str(), text_elements: opt(arr(ref("TextElement"))) }),
    tagged("image", { url: opt(str()), fileId: opt(str()), detail: opt(nullable(ref("ImageDetail"))) }),
    tagged("localImage", { path: str(), detail: opt(nullable(ref("ImageDetail"))) }),
    tagged("audio", { url: opt(str()), fileId: opt(str()) }),
    tagged("localAudio", { path: str() }),
    tagged("skill", { name: str(), path: str() }),
    tagged("mention", { name: str(), path: str() }),
  ),

  // ── Items ──
  MessagePhase: oneOfStrings(MESSAGE_PHASES),
  CommandAction: union(
    tagged("read", { command: str(), name: str(), path: str() }),
    tagged("listFiles", { command: str(), path: opt(nullableString()) }),
    tagged("search", { command: str(), query: opt(nullableString()), path: opt(nullableString()) }),
    tagged("unknown", { command: str() }),
  ),
  CommandExecutionStatus: oneOfStrings(COMMAND_EXECUTION_STATUSES),
  McpToolCallStatus: oneOfStrings(TOOL_CALL_STATUSES),
  DynamicToolCallStatus: oneOfStrings(TOOL_CALL_STATUSES),
  McpToolCallResult: obj({ content: arr(any()), structuredContent: opt(any()) }),
  McpToolCallError: obj({ message: str() }),
  DynamicToolCallOutputContentItem: union(
    tagged("inputText", { text: str() }),
    tagged("inputImage", { imageUrl: str() }),
    tagged("inputAudio", { audioUrl: str() }),
  ),
  ThreadItem: describe(
    "The items the gateway reports: the user's input, the agent's text and thinking, its commands (Tau's bash and the gateway's command tools), its other tools, the client's dynamic tools, plans.",
    union(
      tagged("userMessage", { id: str(), content: arr(ref("UserInput")), clientId: opt(nullableString()) }),
      tagged("agentMessage", { id: str(), text: str(), phase: opt(nullable(ref("MessagePhase"))) }),
      tagged("reasoning", { id: str(), summary: opt(arr(str())), content: opt(arr(str())) }),
      tagged("commandExecution", {
        id: str(),
        command: str(),
        cwd: str(),
        commandActions: arr(ref("CommandAction")),
        status: ref("CommandExecutionStatus"),
        aggregatedOutput: opt(nullableString()),
        exitCode: opt(nullable(int({ min: -2147483648, max: 2147483647 }))),
        durationMs: opt(nullable(int({ min: 0 }))),
        processId: opt(nullableString()),
      }),
      tagged("mcpToolCall", {
        id: str(),
        server: str(),
        tool: str(),
        arguments: any("The tool's arguments."),
        status: ref("McpToolCallStatus"),
        result: opt(nullable(ref("McpToolCallResult"))),
        error: opt(nullable(ref("McpToolCallError"))),
        durationMs: opt(nullable(int({ min: 0 }))),
      }),
      tagged("dynamicToolCall", {
        id: str(),
        tool: str(),
        arguments: any("The tool's arguments."),
        status: ref("DynamicToolCallStatus"),
        namespace: opt(nullableString()),
        contentItems: opt(nullable(arr(ref("DynamicToolCallOutputContentItem")))),
        success: opt(nullable(bool())),
        durationMs: opt(nullable(int({ min: 0 }))),
      }),
      tagged("plan", { id: str(), text: str() }),
      tagged("collabAgentToolCall", {
        id: str(),
        tool: ref("CollabAgentTool"),
        status: ref("CollabAgentToolCallStatus"),
        senderThreadId: str(),
        receiverThreadIds: arr(str()),
        agentsStates: record(ref("CollabAgentState")),
        prompt: opt(nullableString()),
        model: opt(nullableString()),
        reasoningEffort: opt(nullable(ref("ReasoningEffort"))),
      }),
      tagged("subAgentActivity", {
        id: str(),
        kind: ref("SubAgentActivityKind"),
        agentThreadId: str(),
        agentPath: str(),
        model: opt(nullableString()),
        reasoningEffort: opt(nullable(ref("ReasoningEffort"))),
      }),
    ),
  ),
  CollabAgentTool: oneOfStrings(COLLAB_AGENT_TOOLS),
  CollabAgentToolCallStatus: oneOfStrings(COLLAB_TOOL_CALL_STATUSES),
  CollabAgentStatus: oneOfStrings(COLLAB_AGENT_STATUSES),
  CollabAgentState: obj({ status: ref("CollabAgentStatus"), message: opt(nullableString()) }),
  SubAgentActivityKind: oneOfStrings(SUB_AGENT_ACTIVITY_KINDS),

  // ── Catalog ──
  InputModality: oneOfStrings(INPUT_MODALITIES),
  ReasoningEffortOption: obj({ reasoningEffort: ref("ReasoningEffort"), description: str() }),
  Model: obj(
    {
      id: str(),
      model: str(),
      displayName: str(),
      description: str(),
      hidden: bool(),
      isDefault: bool(),
      defaultReasoningEffort: ref("ReasoningEffort"),
      supportedReasoningEfforts: arr(ref("ReasoningEffortOption")),
      inputModalities: opt(arr(ref("InputModality"))),
      upgrade: opt(nullableString()),
    },
    { description: "A model the client may pick: for the gateway, one of the Tau host's personas." },
  ),
  ModeKind: oneOfStrings(MODE_KINDS),
  CollaborationModeMask: obj({
    name: str(),
    mode: opt(nullable(ref("ModeKind"))),
    model: opt(nullableString()),
    reasoning_effort: opt(nullable(ref("ReasoningEffort"))),
  }),
  CollaborationModeSettings: obj({
    model: str(),
    developer_instructions: opt(nullableString()),
    reasoning_effort: opt(nullable(ref("ReasoningEffort"))),
  }),
  CollaborationMode: obj({ mode: ref("ModeKind"), settings: ref("CollaborationModeSettings") }),
  ThreadSettings: obj(
    {
      approvalPolicy: ref("AskForApproval"),
      approvalsReviewer: ref("ApprovalsReviewer"),
      collaborationMode: ref("CollaborationMode"),
      cwd: str(),
      model: str(),
      modelProvider: str(),
      sandboxPolicy: ref("SandboxPolicy"),
      effort: opt(nullable(ref("ReasoningEffort"))),
    },
    { description: "How a thread runs now (thread/settings/updated)." },
  ),
  PermissionProfileSummary: obj({ id: str(), allowed: bool(), description: opt(nullableString()) }),
  SkillsListEntry: obj({ cwd: str(), skills: arr(any()), errors: arr(any()) }),
  DynamicToolFunction: obj({
    type: literal("function"),
    name: str(),
    description: str(),
    inputSchema: any("JSON Schema of the arguments."),
    deferLoading: opt(bool()),
  }),
  DynamicToolSpec: describe(
    "A tool the client offers the agent: a function, or a namespace of functions.",
    union(
      ref("DynamicToolFunction"),
      obj({ type: literal("namespace"), name: str(), description: str(), tools: arr(ref("DynamicToolFunction")) }),
    ),
  ),

  // ── Progress ──
  TurnPlanStepStatus: oneOfStrings(TURN_PLAN_STEP_STATUSES),
  TurnPlanStep: obj({ step: str(), status: ref("TurnPlanStepStatus") }),
  TokenUsageBreakdown: obj({
    totalTokens: int({ min: 0 }),
    inputTokens: int({ min: 0 }),
    cachedInputTokens: int({ min: 0 }),
    outputTokens: int({ min: 0 }),
    reasoningOutputTokens: int({ min: 0 }),
  }),
  ThreadTokenUsage: obj({
    total: ref("TokenUsageBreakdown"),
    last: ref("TokenUsageBreakdown"),
    modelContextWindow: opt(nullable(int({ min: 0 }))),
  }),

  // ── Server requests ──
  CommandExecutionApprovalDecision: union(
    literal("accept"),
    literal("acceptForSession"),
    obj({ acceptWithExecpolicyAmendment: obj({ execpolicy_amendment: arr(str()) }) }, { strict: true }),
    obj({ applyNetworkPolicyAmendment: obj({ network_policy_amendment: any() }) }, { strict: true }),
    literal("decline"),
    literal("cancel"),
  ),
  ToolRequestUserInputOption: obj({ label: str(), description: str() }),
  ToolRequestUserInputQuestion: obj({
    id: str(),
    header: str(),
    question: str(),
    isOther: opt(bool()),
    isSecret: opt(bool()),
    options: opt(nullable(arr(ref("ToolRequestUserInputOption")))),
  }),
  ToolRequestUserInputAnswer: obj({ answers: arr(str()) }),
};
