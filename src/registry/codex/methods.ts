import type { MethodEntry } from "../model.js";
import { any, arr, bool, describe, int, literal, nullable, obj, opt, ref, str, union, type Schema } from "../schema.js";

/**
 * The client → server requests the gateway serves (every other method is answered -32601), with
 * params and results as in the official schema. Params accept unknown fields, as Codex does: the
 * official params carry many options a Tau host has no use for, and clients send them. The fields
 * the gateway reads are checked, so a bad one is answered -32602 naming it.
 */

/** What a request needs of the connection, beyond being initialized (see `MethodEntry`). */
type RequestFacts = Pick<MethodEntry, "beforeInitialize" | "experimental" | "experimentalFields">;

const request = (name: string, description: string, params: Schema, result: Schema, facts: RequestFacts = {}): MethodEntry => ({
  kind: "request",
  sender: "client",
  name,
  description: facts.experimental ? `${description} Experimental: only for connections that set capabilities.experimentalApi.` : description,
  params,
  result,
  ...facts,
});

/**
 * The params fields of the methods the gateway serves that only Codex's experimental API has
 * (0.169.0: in the `--experimental` schema bundle, not in the stable one). Codex refuses a value for
 * one from a connection that did not set capabilities.experimentalApi, naming it `<method>.<field>`;
 * test/unit/codex-experimental-fields.test.ts holds these lists to the official bundles.
 */
const EXPERIMENTAL_THREAD_START_FIELDS = [
  "allowProviderModelFallback",
  "daybreakEnabled",
  "dynamicTools",
  "environments",
  "experimentalRawEvents",
  "historyMode",
  "mockExperimentalField",
  "multiAgentMode",
  "permissions",
  "projectId",
  "runtimeWorkspaceRoots",
  "selectedCapabilityRoots",
];
const EXPERIMENTAL_TURN_START_FIELDS = [
  "additionalContext",
  "collaborationMode",
  "cyberAccessProgram",
  "environments",
  "multiAgentMode",
  "permissions",
  "responsesapiClientMetadata",
  "responsesapiClientMetadataPatch",
  "runtimeWorkspaceRoots",
];

const nullableString = () => nullable(str());
const page = {
  cursor: opt(nullableString()),
  limit: opt(nullable(int({ min: 0, max: 4294967295 }))),
};
const nextCursor = opt(nullableString());

/**
 * `approvalPolicy` as clients send it: the official values, plus `on-failure`, which Codex 0.169.0
 * refuses but the AI SDK provider may send; the gateway reads it as on-request.
 */
const approvalPolicyParam = opt(
  union(ref("AskForApproval"), describe("Gateway extension: read as on-request.", literal("on-failure")), { type: "null" }),
);

/** What thread/start, thread/resume and turn/start accept about how the thread runs. */
const threadSettings = {
  cwd: opt(nullableString()),
  model: opt(nullableString()),
  modelProvider: opt(nullableString()),
  approvalPolicy: approvalPolicyParam,
  approvalsReviewer: opt(nullable(ref("ApprovalsReviewer"))),
  sandbox: opt(nullable(ref("SandboxMode"))),
  config: opt(nullable({ type: "object" })),
  baseInstructions: opt(nullableString()),
  developerInstructions: opt(nullableString()),
};

/** The result of thread/start and thread/resume. */
const threadOpened = (extra: Record<string, unknown> = {}) =>
  obj({
    thread: ref("Thread"),
    model: str(),
    modelProvider: str(),
    cwd: str({ description: "Absolute path." }),
    approvalPolicy: ref("AskForApproval"),
    approvalsReviewer: ref("ApprovalsReviewer"),
    sandbox: ref("SandboxPolicy"),
    reasoningEffort: opt(nullable(ref("ReasoningEffort"))),
    serviceTier: opt(nullableString()),
    ...extra,
  });

export const codexMethodEntries: MethodEntry[] = [
  // ── Handshake ──
  request(
    "initialize",
    "Handshake: the first request of a connection; every other request before it is refused.",
    obj({ clientInfo: ref("ClientInfo"), capabilities: opt(nullable(ref("InitializeCapabilities"))) }),
    obj({
      userAgent: str({ description: "`name/version …`: clients read the server version between the first / and the next space." }),
      codexHome: str({ description: "Absolute path." }),
      platformFamily: str({ description: "unix or windows." }),
      platformOs: str(),
    }),
    { beforeInitialize: true },
  ),

  // ── Account, models, configuration ──
  request(
    "account/read",
    "The signed-in account; the gateway needs none.",
    obj({ refreshToken: opt(bool()) }),
    obj({ requiresOpenaiAuth: bool(), account: opt(nullable(any("An account; the gateway has none."))), userId: opt(nullableString()) }),
  ),
  request(
    "model/list",
    "The models a thread may use: the Tau host's personas.",
    obj({ ...page, includeHidden: opt(nullable(bool())), modelProvider: opt(nullableString()) }),
    obj({ data: arr(ref("Model")), nextCursor }),
  ),
  request(
    "config/read",
    "The effective configuration; the gateway has none to report.",
    obj({ includeLayers: opt(bool()), cwd: opt(nullableString()) }),
    obj({
      config: describe("Configuration keys (snake_case); all optional.", { type: "object" }),
      origins: describe("Where each key came from.", { type: "object" }),
      layers: opt(nullable(arr(any()))),
    }),
  ),
  request(
    "configRequirements/read",
    "Requirements an administrator put on the configuration; none here.",
    describe("No params.", obj({})),
    obj({ requirements: opt(nullable(any())), supportsIndependentSpeedModes: opt(nullable(bool())) }),
  ),
  request(
    "collaborationMode/list",
    "Collaboration modes: the gateway lists Default only.",
    obj({}),
    obj({ data: arr(ref("CollaborationModeMask")) }),
    { experimental: true },
  ),
  request(
    "permissionProfile/list",
    "Permission profiles; the gateway has none (its command tools ask for approval per call).",
    obj({ ...page, cwd: opt(nullableString()) }),
    obj({ data: arr(ref("PermissionProfileSummary")), nextCursor }),
  ),
  request(
    "skills/list",
    "Skills per working directory; the gateway lists none.",
    obj({ cwds: opt(arr(str())), forceReload: opt(bool()) }),
    obj({ data: arr(ref("SkillsListEntry")) }),
  ),
  request(
    "hooks/list",
    "Hooks per working directory (the thread's, with threadId); the gateway runs no Codex hooks, so each lists none.",
    obj({ cwds: opt(arr(str())), threadId: opt(nullableString()) }),
    obj({
      data: arr(
        obj({
          cwd: str(),
          hooks: arr(any("A hook; the gateway has none.")),
          errors: arr(any("A hook configuration error; the gateway has none.")),
          warnings: arr(str()),
        }),
      ),
    }),
  ),
  request(
    "plugin/installed",
    "Installed plugins by marketplace; the gateway has no plugins.",
    obj({ cwds: opt(nullable(arr(str()))), installSuggestionPluginNames: opt(nullable(arr(str()))) }),
    obj({ marketplaces: arr(any("A plugin marketplace; the gateway has none.")), marketplaceLoadErrors: opt(arr(any("A marketplace load error; the gateway has none."))) }),
  ),
  request(
    "account/bedrock/checkGovCloudRequirements",
    "Advisory check of the Bedrock configuration; the gateway signs in to no Bedrock account, so none resolves to GovCloud and nothing needs a warning.",
    describe("No params.", obj({})),
    obj({ isGovCloud: bool(), shouldWarn: bool() }),
    { experimental: true },
  ),

  // ── Threads ──
  request(
    "thread/start",
    "Start a thread: a new Tau session; thread/started follows the response.",
    obj(
      {
        ...threadSettings,
        ephemeral: opt(nullable(bool())),
        dynamicTools: opt(describe("Experimental: tools the client offers the agent; calls arrive as item/tool/call.", nullable(arr(ref("DynamicToolSpec"))))),
      },
      { description: "dynamicTools is experimental: only for connections that set capabilities.experimentalApi." },
    ),
    threadOpened(),
    { experimentalFields: EXPERIMENTAL_THREAD_START_FIELDS },
  ),
  request(
    "thread/resume",
    "Load a thread on this connection (from any connection, after a restart too), with its history as turns unless excludeTurns.",
    obj({ threadId: str(), excludeTurns: opt(bool()), ...threadSettings }),
    threadOpened(),
    { experimentalFields: ["history", "initialTurnsPage", "path", "permissions", "runtimeWorkspaceRoots"] },
  ),
  request(
    "thread/read",
    "Read a thread; its turns only with includeTurns.",
    obj({ threadId: str(), includeTurns: opt(bool()) }),
    obj({ thread: ref("Thread") }),
  ),
  request(
    "thread/list",
    "Threads of this tenant, most recently updated first; turns are not included.",
    obj({
      ...page,
      searchTerm: opt(nullableString()),
      cwd: opt(any("A path or a list of paths.")),
      sourceKinds: opt(nullable(describe("Sub-agent kinds (subAgent, subAgentThreadSpawn) list the child threads of Tau's sub-agents.", arr(ref("ThreadSourceKind"))))),
    }),
    obj({ data: arr(ref("Thread")), nextCursor, backwardsCursor: opt(nullableString()) }),
    { experimentalFields: ["ancestorThreadId", "attachedToThreadId", "includeAttachedThreads", "parentThreadId", "projectId"] },
  ),
  request(
    "thread/turns/list",
    "A page of a thread's turns, from the history thread/read gives; newest first unless sortDirection is asc. A cursor is one this method returned: nextCursor continues after the page's last turn, backwardsCursor (for the opposite sortDirection) starts again at its first.",
    obj({
      threadId: str(),
      cursor: opt(nullableString()),
      limit: opt(nullable(int({ min: 0, max: 4294967295 }))),
      sortDirection: opt(nullable(ref("SortDirection"))),
      itemsView: opt(nullable(ref("TurnItemsView"))),
    }),
    obj({ data: arr(ref("Turn")), nextCursor, backwardsCursor: opt(nullableString()) }),
  ),
  request(
    "thread/loaded/list",
    "Ids of the threads loaded on this connection.",
    obj({ ...page }),
    obj({ data: arr(str()), nextCursor }),
  ),

  // ── Turns ──
  request(
    "turn/start",
    "Start a turn with the user's input; its notifications follow the response. During a running turn the input steers it and the running turn is returned.",
    obj({
      threadId: str(),
      input: arr(ref("UserInput")),
      cwd: opt(nullableString()),
      model: opt(nullableString()),
      approvalPolicy: approvalPolicyParam,
      approvalsReviewer: opt(nullable(ref("ApprovalsReviewer"))),
      sandboxPolicy: opt(nullable(ref("SandboxPolicy"))),
      effort: opt(nullable(ref("ReasoningEffort"))),
      clientUserMessageId: opt(nullableString()),
    }),
    obj({ turn: ref("Turn") }),
    { experimentalFields: EXPERIMENTAL_TURN_START_FIELDS },
  ),
  request(
    "turn/steer",
    "Add input to the running turn.",
    obj({ threadId: str(), expectedTurnId: str(), input: arr(ref("UserInput")) }),
    obj({ turnId: str() }),
    { experimentalFields: ["additionalContext", "responsesapiClientMetadata", "responsesapiClientMetadataPatch"] },
  ),
  request(
    "turn/interrupt",
    "Interrupt the running turn; it then completes with status interrupted.",
    obj({ threadId: str(), turnId: str() }),
    obj({}),
  ),
];
