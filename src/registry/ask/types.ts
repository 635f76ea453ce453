import { any, anyOf, arr, bool, describe, int, literal, nonEmpty, nullable, obj, oneOfStrings, opt, record, ref, str, union, type Schema } from "../schema.js";

/**
 * Shared Ask definitions: the vocabularies (delivery kinds, capabilities, modes, scopes) and the
 * records that several methods and events carry. The string lists are exported as constants too,
 * so code branches on the same values the schema enforces.
 */

/** Ask's DELIVERY_KINDS plus ZCode's other kind, which app-server clients send. */
export const DELIVERY_KINDS = ["live", "replay", "web-remote-replayable", "desktop-continuous"] as const;

/** Methods::CAPABILITIES; a host advertises only the subset it really emits. */
export const CAPABILITIES = [
  "sessionManagement",
  "eventStreaming",
  "midExecutionInjection",
  "interactions",
  "planMode",
  "todos",
  "artifacts",
  "workspace",
  "fileEvents",
] as const;

export const SESSION_MODES = [
  "on_request",
  "build",
  "edit",
  "auto",
  "never",
  "off",
  "yolo",
  "plan",
  "full_access",
] as const;
export const APPROVAL_MODES = ["off", "require", "auto"] as const;
export const APPROVAL_SCOPES = ["once", "session", "project"] as const;
export const INTERACTION_KINDS = ["approval", "plan", "user_input"] as const;
export const INTERACTION_STATUSES = ["pending", "approved", "rejected", "responded", "cancelled", "expired"] as const;
export const SEND_STATUSES = ["queued", "steered", "stale"] as const;
export const SEND_MODES = ["queue", "steer"] as const;
/** The tool names Ask hosts know for session/create `tools` (their built-in tools). */
export const ASK_TOOL_NAMES = ["bash", "read", "write", "edit", "glob", "grep", "code"] as const;

/** Said of each interaction interaction/list returns, for the caller (src/bridge/decision-offers.ts). */
const mayDecide = () =>
  opt(
    describe(
      "Gateway extension: whether the caller may decide this interaction. false for a principal whose role does not answer (an observer): interaction/approve, reject and respond are refused, and no reverse request asks it. Absent for a caller without a principal (a gateway without tokens), who always may.",
      bool(),
    ),
  );

export const typeDefinitions: Record<string, Schema> = {
  ApprovalDetails: obj(
    {
      toolName: str({ description: "Name of the gated tool." }),
      args: opt(describe("Arguments of the gated call.", record(any()))),
      message: opt(str({ description: "Human-readable reason the call needs approval." })),
      autoApprovable: opt(bool()),
      allowedScopes: opt(arr(ref("ApprovalScope"), { unique: true })),
    },
    { description: "What an approval asks about: shared by approval.required and the approval interaction record." },
  ),

  ApprovalVoteCount: obj(
    {
      approvals: opt(describe("Distinct approvers counted so far, this one among them; absent when the vote was given on a gateway replica that does not hold the call (the replica holding it counts it, and says so with approval.voted).", int({ min: 1 }))),
      needed: describe("Distinct approvers the approval needs.", int({ min: 1 })),
    },
    {
      description:
        "Gateway extension: an answer taken as one vote towards an approval a policy rule needs several approvers for (count), which did not decide it: the approval is still pending, and the other clients are still asked.",
    },
  ),

  UserInputDetails: obj(
    {
      prompt: str({ description: "The question to put to the user." }),
      options: opt(arr(str(), { max: 64 })),
    },
    { description: "What a user-input request asks: shared by input.requested and the user_input interaction record." },
  ),

  CompactionKind: describe(
    "Who started a compaction: the host on its own (auto) or a client (manual).",
    oneOfStrings(["auto", "manual"]),
  ),

  SessionId: nonEmpty({ description: "Session id: a non-empty string that is not whitespace only." }),

  DeliveryKind: describe(
    "How a subscription delivers: live = new events only; replay (default) = events after afterSeq, then live; web-remote-replayable = replay for web/remote clients; desktop-continuous = ZCode's other kind, accepted for app-server interop and delivered like replay.",
    oneOfStrings(DELIVERY_KINDS),
  ),

  Capability: describe(
    "A host capability advertised by initialize; clients may gate UI features on it.",
    oneOfStrings(CAPABILITIES),
  ),

  SessionMode: describe(
    "session/create mode, mapped to an approval mode for the gateway's own gated tools: never, off, yolo and full_access → off; auto → auto; on_request, build, edit and plan → require. Tau's own host tools are not gated in any mode, so plan does not make a session read-only.",
    oneOfStrings(SESSION_MODES),
  ),

  ApprovalMode: describe(
    "Canonical approval mode a session reports: off, require or auto.",
    oneOfStrings(APPROVAL_MODES),
  ),

  ApprovalScope: describe(
    "How far an approval reaches: once (default) = this call; session = this tool for the rest of the session; project = this tool in this workspace.",
    oneOfStrings(APPROVAL_SCOPES),
  ),

  SendStatus: describe(
    "What session/send did: steered = started a turn (idle session), or with mode steer injected into the running turn; queued = without mode, injected into the running turn at its next model call (the Ask host's word), or with mode queue held for the next turn boundary; stale = expectedTurnId did not match, nothing sent.",
    oneOfStrings(SEND_STATUSES),
  ),

  SendMode: describe(
    "How a message sent to a running session is delivered: queue = next turn boundary, steer = next model call.",
    oneOfStrings(SEND_MODES),
  ),

  ClientInfo: obj(
    { name: opt(str()), version: opt(str()) },
    { description: "Name and version a client reports in initialize." },
  ),

  ServerInfo: obj({ name: str(), version: str() }, { description: "Name and version of the host." }),

  SessionInfo: obj(
    {
      sessionId: ref("SessionId"),
      model: str({ description: "Model id without any provider/ prefix." }),
      createdAt: str({ description: "ISO 8601 creation time." }),
    },
    { description: "A newly created session." },
  ),

  SessionSummary: obj(
    {
      sessionId: ref("SessionId"),
      model: nullable(str({ description: "Model id; null when the session has not been observed yet." })),
      createdAt: nullable(str({ description: "ISO 8601 creation time; null when not known yet." })),
      running: bool(),
      idle: bool(),
    },
    { description: "One entry of session/list." },
  ),

  Subscription: obj(
    { sessionId: ref("SessionId"), deliveryKind: ref("DeliveryKind") },
    { description: "The subscription session/subscribe recorded for this connection." },
  ),

  EventEnvelope: obj(
    {
      type: str(),
      seq: int({ min: 1 }),
      payload: record(any()),
    },
    {
      description:
        "The canonical event envelope in its generic form, for readers that must tolerate event types they do not know.",
    },
  ),

  InteractionKind: describe(
    "What an interaction asks for: a tool approval, a plan decision or user input.",
    oneOfStrings(INTERACTION_KINDS),
  ),

  InteractionStatus: describe(
    "Lifecycle of an interaction: pending until resolved; cancelled when the underlying call is cancelled or the session closes; expired when nobody answered before the deadline (which denies).",
    oneOfStrings(INTERACTION_STATUSES),
  ),

  ApprovalInteraction: obj(
    {
      id: str(),
      kind: literal("approval"),
      status: ref("InteractionStatus"),
      payload: ref("ApprovalDetails"),
      mayDecide: mayDecide(),
    },
    { description: "A gated tool call waiting for (or resolved by) interaction/approve or interaction/reject." },
  ),

  PlanInteraction: obj(
    {
      id: str(),
      kind: literal("plan"),
      status: ref("InteractionStatus"),
      payload: obj({ plan: str() }),
      mayDecide: mayDecide(),
    },
    { description: "A plan proposal, resolved by plan/approve or plan/reject." },
  ),

  UserInputInteraction: obj(
    {
      id: str(),
      kind: literal("user_input"),
      status: ref("InteractionStatus"),
      payload: ref("UserInputDetails"),
      mayDecide: mayDecide(),
    },
    { description: "A question for the user, answered by interaction/respond or interaction/requestUserInput." },
  ),

  InteractionRecord: {
    description: "An interaction as interaction/list returns it: {id, kind, status, payload}, discriminated by kind.",
    ...union(ref("ApprovalInteraction"), ref("PlanInteraction"), ref("UserInputInteraction")),
  },

  ArtifactRecord: obj(
    {
      id: str(),
      filename: opt(str()),
      kind: opt(oneOfStrings(["tool_result", "image"])),
      mimeType: opt(str()),
      toolName: opt(str()),
      toolCallId: opt(str()),
      size: opt(int({ min: 0 })),
      encoding: opt(oneOfStrings(["utf8", "base64"])),
      content: opt(str({ description: "Inline content; absent in session/artifacts listings." })),
      uri: opt(str({ description: "Where to fetch the content when it is not inline." })),
      createdAt: opt(str({ description: "ISO 8601 time the artifact was produced." })),
    },
    { description: "A tool result or image produced in a session." },
  ),

  WorkspaceState: obj(
    {
      path: nullable(str()),
      name: nullable(str()),
      gitBranch: nullable(str()),
      mode: ref("ApprovalMode"),
      sessionId: opt(ref("SessionId")),
      running: opt(bool()),
    },
    { description: "A session's working directory, its git branch and the approval mode in force." },
  ),

  WorkspaceSettings: obj(
    {
      model: obj({
        current: obj({
          modelId: nullable(str({ description: "Model id without provider prefix; null when no session tells it." })),
          providerId: nullable(str()),
        }),
      }),
      permissions: obj({ mode: str({ description: "The approval mode: off, require or auto." }) }),
    },
    { description: "Settings block of workspace/readState, kept for legacy clients." },
  ),

  TodoItem: obj(
    {
      id: opt(anyOf(str(), int({ min: -Number.MAX_SAFE_INTEGER }))),
      title: opt(str()),
      status: opt(str({ description: "e.g. pending, in_progress, completed." })),
    },
    { description: "One entry of todos.updated; hosts may add further fields." },
  ),

  QueuedMessage: obj(
    {
      id: nonEmpty(),
      mode: ref("SendMode"),
      text: nonEmpty(),
    },
    { description: "A user message waiting for the next turn boundary (queue) or the next model call (steer)." },
  ),

  SubagentActivity: describe(
    "One thing a sub-agent did, as Tau reports it on its activity channel: what it said (assistant), a tool it used (tool: its name, how it ended and what it acted on), or a notice.",
    union(
      obj({ type: literal("assistant"), text: str() }),
      obj({
        type: literal("tool"),
        toolName: str(),
        outcome: oneOfStrings(["succeeded", "failed", "blocked", "cancelled"]),
        action: str({ description: "What the tool did, e.g. Read." }),
        subject: str({ description: "What it acted on." }),
        details: opt(arr(str())),
      }),
      obj({ type: literal("notice"), severity: oneOfStrings(["info", "warn", "error"]), title: str(), content: opt(arr(str())) }),
    ),
  ),

  SubagentStatus: describe(
    "How a sub-agent's run ended: succeeded with a response, failed with an error, or interrupted (by a client's interrupt, or the host stopping).",
    oneOfStrings(["succeeded", "failed", "interrupted"]),
  ),
};
