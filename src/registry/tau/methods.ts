import type { MethodEntry, ParamsWording } from "../model.js";
import { arr, base64, bool, describe, during, int, literal, nonEmpty, noNul, nullable, obj, oneOfStrings, opt, protocolVersion, ref, since, str, union, type Schema } from "../schema.js";
import { clientToolContent } from "./client-tools.js";
import { anyInt, autoCompactThreshold, nonEmptyNoNul } from "./common.js";
import { emptyObjectOnly, ENV_RULES, issuesOnly, NON_EMPTY, NON_EMPTY_IF_GIVEN, REASONING_VALUES, sessionWords, tauWords } from "./params-wording.js";

/**
 * Every Tau request method (spec §4), in the order `ready` advertises them. Params objects strip
 * unknown fields except `session.setAutoCompactThreshold`, which Tau parses strictly. `words` are
 * Tau v18's own sentences for invalid params of the method (see params-wording.ts).
 */

export const EXEC_MAX_CAPTURE_BYTES = 24 * 1024 * 1024;
export const EXEC_MAX_STDIN_BYTES = 16 * 1024 * 1024;
export const AUTOCOMPLETE_MAX_LIMIT = 100;

const sessionId = () => nonEmpty({ description: "Session id from session.create or session.list." });
const historyEntryId = () => nonEmpty({ description: "Client-chosen history entry id; Tau trims it." });
const withSession = (props: Record<string, unknown> = {}, options?: Parameters<typeof obj>[1]): Schema =>
  obj({ sessionId: sessionId(), ...props }, options);

type Extra = Partial<Pick<MethodEntry, "versions" | "versionNote" | "settles">> & { words?: (method: string) => ParamsWording };

const request = (name: string, description: string, params: Schema, result: Schema, extra: Extra = {}): MethodEntry => {
  const { words, ...rest } = extra;
  return { name, kind: "request", sender: "client", description, params, result, ...rest, ...(words ? { invalidParams: words(name) } : {}) };
};

const GOAL_METHODS = { versions: { until: 15 }, versionNote: "removed somewhere in 16–18" } as const;
const SETTLES = { settles: true } as const;
const sessionIdOnly = { words: sessionWords() };
const sessionCreateWords = tauWords(
  ["executionEnvironment", "must be an object"],
  ["executionEnvironment.kind", "must be 'local' or 'fly-sprite'"],
  ["executionEnvironment.cwd", "must be an absolute path"],
  ["executionEnvironment.env", ENV_RULES],
  ["attributes", "must contain at most 32 bounded string pairs"],
  ["personaId", NON_EMPTY],
  ["reasoning", `must be ${REASONING_VALUES}`],
);
const userMessageWords = { words: sessionWords(["text", NON_EMPTY], ["historyEntryId", NON_EMPTY_IF_GIVEN]) };

export const tauMethods: MethodEntry[] = [
  // §4.1 Connection / discovery
  request(
    "initialize",
    "Identifies the client and advertises its client tools; only the first call on a connection registers tools.",
    obj({
      client: obj({
        name: nonEmpty(),
        version: nonEmpty(),
        tools: opt(arr(ref("ClientToolDefinition"))),
      }),
    }),
    obj({
      protocolVersion: protocolVersion(),
      methods: arr(ref("MethodName"), { unique: true }),
      alreadyInitialized: bool(),
    }),
    {
      words: () => ({
        notObject: "initialize params must be an object with client metadata",
        fields: [
          { path: ["client"], message: "initialize.client must be an object with name/version strings and optional tools" },
          { path: ["client", "name"], message: "initialize.client.name must be a non-empty string" },
          { path: ["client", "version"], message: "initialize.client.version must be a non-empty string" },
        ],
        otherwise: "initialize params are invalid",
      }),
    },
  ),
  request(
    "session.create",
    "Creates a session in one explicitly chosen execution environment without observing it.",
    obj({
      executionEnvironment: ref("ExecutionEnvironmentInput"),
      attributes: ref("Attributes"),
      personaId: opt(nonEmpty()),
      autoCompactThresholdTokens: since(16, opt(autoCompactThreshold()), "added somewhere in 16–18"),
      reasoning: opt(ref("Reasoning")),
    }),
    obj({ sessionId: nonEmpty() }),
    {
      words: sessionCreateWords,
    },
  ),
  request(
    "session.list",
    "Lists the sessions this host can serve.",
    obj({}),
    obj({ sessions: arr(obj({ sessionId: nonEmpty(), lifecycle: ref("SessionLifecycle") })) }),
    { words: emptyObjectOnly() },
  ),
  request(
    "session.observe",
    "Starts (or refreshes) observation of a session and returns its three baselines.",
    withSession(),
    obj({
      snapshot: ref("Snapshot"),
      pendingUserMessages: ref("PendingUserMessagesState"),
      subagentActivities: ref("SubagentActivitiesState"),
    }),
    sessionIdOnly,
  ),
  request(
    "session.unobserve",
    "Stops this connection's observation of a session without interrupting it.",
    withSession(),
    obj({ unobserved: literal(true) }),
    sessionIdOnly,
  ),

  // §4.2 User input and turns
  request(
    "session.record",
    "Appends user text without running a turn, interrupting active work and rejecting pending input.",
    withSession({ text: nonEmpty(), historyEntryId: opt(historyEntryId()) }),
    obj({ snapshot: ref("Snapshot"), userHistoryEntryId: nonEmpty() }),
    userMessageWords,
  ),
  request(
    "session.submit",
    "Appends user text and runs one turn on an idle session, answering when the turn settles.",
    withSession({ text: nonEmpty(), historyEntryId: opt(historyEntryId()) }),
    ref("UserTurnResult"),
    userMessageWords,
  ),
  request(
    "session.queue",
    "Runs user text now if idle, otherwise as a pending message once the session is idle.",
    withSession({ text: nonEmpty(), historyEntryId: opt(historyEntryId()) }),
    ref("UserTurnResult"),
    userMessageWords,
  ),
  request(
    "session.steer",
    "Joins active model work at its next safe boundary, or starts an ordinary turn when idle.",
    withSession({ text: nonEmpty() }),
    ref("UserTurnResult"),
    { words: sessionWords(["text", NON_EMPTY]) },
  ),
  request(
    "session.cancelPendingMessages",
    "Cancels every pending queue and steering request without interrupting active work.",
    withSession(),
    obj({
      cancelled: describe("Steering first, then queued messages.", arr(ref("PendingUserMessage"))),
    }),
    sessionIdOnly,
  ),
  request(
    "session.retry",
    "Runs one turn from current history without new user text.",
    withSession(),
    ref("TurnResult"),
    sessionIdOnly,
  ),
  request(
    "session.exec",
    "Runs a fresh non-interactive login Bash in the execution environment, outside history and the snapshot.",
    withSession({
      execId: nonEmpty({ description: "Unique among this connection's active executions." }),
      command: nonEmptyNoNul(),
      args: opt(describe("With args, the first value becomes $0 and the rest $@.", arr(noNul()))),
      env: opt(ref("EnvVars")),
      stdinBase64: opt(
        describe(
          "Padded base64, at most 16 MiB decoded (the length bound can overshoot by up to 2 bytes).",
          base64({ maxDecodedBytes: EXEC_MAX_STDIN_BYTES }),
        ),
      ),
      cwd: opt(nonEmptyNoNul({ description: "Working directory; not a confinement boundary." })),
      timeoutMs: opt(int({ min: 1 })),
      maxCaptureBytes: opt(describe("Default 1 MiB.", int({ min: 1, max: EXEC_MAX_CAPTURE_BYTES }))),
    }),
    obj({
      output: str(),
      stdout: str(),
      stderr: str(),
      exitCode: nullable(anyInt()),
      truncated: bool(),
      timedOut: bool(),
      aborted: bool(),
      closeSignal: nullable(str()),
    }),
    {
      words: sessionWords(
        ["execId", NON_EMPTY],
        ["command", "must be a non-empty string without null bytes"],
        ["args", "must be an array of strings without null bytes when provided"],
        ["env", ENV_RULES],
        ["stdinBase64", `must be valid base64 encoding at most ${EXEC_MAX_STDIN_BYTES} bytes`],
        ["cwd", "must be a non-empty string without null bytes when provided"],
        ["timeoutMs", "must be a positive integer when provided"],
        ["maxCaptureBytes", `must be a positive integer no greater than ${EXEC_MAX_CAPTURE_BYTES} when provided`],
      ),
    },
  ),
  request(
    "session.cancelExec",
    "Cancels one active execution without interrupting other work.",
    withSession({ execId: nonEmpty() }),
    obj({ cancelled: bool() }),
    { ...SETTLES, words: sessionWords(["execId", NON_EMPTY]) },
  ),
  request(
    "session.sample",
    "Runs isolated inference with the session's model on the supplied context only, returning tool calls as data.",
    withSession({
      context: obj({
        systemPrompt: str(),
        messages: arr(ref("SampleMessage")),
        tools: opt(arr(ref("SampleTool"))),
      }),
      options: obj({ reasoning: opt(ref("Reasoning")), maxTokens: opt(int({ min: 1 })) }),
    }),
    obj({ message: ref("AssistantMessage") }),
    { words: sessionWords(["context", "must include a system prompt and messages"], ["options", "must be an object"]) },
  ),
  request(
    "session.interrupt",
    "Cooperatively cancels the active turn, direct executions, samples and maintenance.",
    withSession(),
    obj({ interrupted: bool(), isTurnRunning: bool() }),
    { ...SETTLES, ...sessionIdOnly },
  ),

  // §4.4 State and settings
  request("session.snapshot", "Returns the complete authoritative snapshot.", withSession(), ref("Snapshot"), sessionIdOnly),

  // Goals (v13 method reference; gone by v18)
  request(
    "session.startGoal",
    "Creates the single persistent goal, commits its objective as user input and runs autonomous continuations.",
    withSession({ objective: nonEmpty() }),
    ref("UserTurnResult"),
    GOAL_METHODS,
  ),
  request(
    "session.resumeGoal",
    "Resumes a blocked goal without adding a visible user message.",
    withSession(),
    ref("TurnResult"),
    GOAL_METHODS,
  ),
  request(
    "session.clearGoal",
    "Clears the current goal, interrupting active work and rejecting pending input.",
    withSession(),
    ref("Snapshot"),
    GOAL_METHODS,
  ),

  request(
    "session.setReasoning",
    "Changes the reasoning effort from the next logical turn without interrupting the running one.",
    withSession({ reasoning: ref("Reasoning") }),
    ref("SettingsUpdateResult"),
    { words: sessionWords(["reasoning", `must be ${REASONING_VALUES}`]) },
  ),
  request(
    "session.setAutoCompactThreshold",
    "Changes the configured auto-compaction threshold from the next logical turn without starting compaction.",
    withSession({ thresholdTokens: autoCompactThreshold() }, { strict: true }),
    ref("SettingsUpdateResult"),
    { versions: { since: 16 }, versionNote: "added somewhere in 16–18", words: issuesOnly() },
  ),
  request(
    "session.setPersona",
    "Switches to a persona from the session catalog, interrupting active work and rejecting pending input.",
    withSession({ personaId: nonEmpty() }),
    ref("Snapshot"),
    { words: sessionWords(["personaId", NON_EMPTY]) },
  ),
  request(
    "session.resolvePrompt",
    "Loads one prompt body from the execution environment.",
    withSession({ promptId: nonEmpty() }),
    obj({ promptId: nonEmpty(), text: str() }),
    { words: sessionWords(["promptId", NON_EMPTY]) },
  ),
  request(
    "session.autocompletePaths",
    "Returns bounded path suggestions from the execution environment.",
    withSession({ query: str(), limit: int({ min: 1, max: AUTOCOMPLETE_MAX_LIMIT }) }),
    obj({ paths: describe("Directories end with `/`.", arr(str())) }),
    { words: sessionWords(["query", "must be a string"], ["limit", `must be a positive integer up to ${AUTOCOMPLETE_MAX_LIMIT}`]) },
  ),

  // §4.5 Reload / compact / rewind
  request(
    "session.reload",
    "Reloads session-owned configuration and content, interrupting active work and rejecting pending input.",
    withSession(),
    obj({
      snapshot: ref("Snapshot"),
      warnings: arr(str()),
      counts: obj({ personas: int({ min: 0 }), prompts: int({ min: 0 }), skills: int({ min: 0 }) }),
    }),
    sessionIdOnly,
  ),
  request(
    "session.compact",
    "Replaces active model context with a generated summary, advancing the timeline epoch on success.",
    withSession({ mode: ref("CompactionMode"), guidance: opt(str()) }),
    obj({ snapshot: ref("Snapshot"), compactionMessage: nonEmpty(), includedLastAssistant: bool() }),
    { words: sessionWords(["mode", "must be 'summary-only' or 'summary-and-last'"], ["guidance", "must be a string when provided"]) },
  ),
  request(
    "session.rewind",
    "Removes one user history entry and everything after it on an idle session with no pending input.",
    withSession({ historyEntryId: historyEntryId() }),
    obj({
      snapshot: ref("Snapshot"),
      historyEntryId: nonEmpty(),
      text: describe("The removed user text, for restoring to an editor.", str()),
      removedEntryIds: arr(nonEmpty()),
    }),
    { words: sessionWords(["historyEntryId", NON_EMPTY]) },
  ),

  // §4.6 Subagents and ephemeral contexts
  request(
    "session.interruptSubagent",
    "Interrupts the current run of one subagent without disposing its reusable thread.",
    withSession({ subagentId: nonEmpty() }),
    obj({ found: bool() }),
    { ...SETTLES, words: sessionWords(["subagentId", NON_EMPTY]) },
  ),
  request(
    "session.ephemeral.create",
    "Creates a non-persisted host-owned agent context with the given instructions and exact tool set.",
    withSession({
      instructions: nonEmpty(),
      tools: arr(ref("EphemeralAgentTool")),
      reasoning: opt(ref("Reasoning")),
    }),
    obj({ contextId: nonEmpty() }),
    {
      words: sessionWords(["instructions", NON_EMPTY], ["tools", "are invalid"], ["reasoning", `must be ${REASONING_VALUES} when provided`]),
    },
  ),
  request(
    "session.ephemeral.submit",
    "Runs or continues one thread of an ephemeral context, optionally forking an idle thread.",
    withSession({
      contextId: nonEmpty(),
      threadId: nonEmpty(),
      forkFromThreadId: opt(nonEmpty()),
      message: nonEmpty(),
      reasoning: opt(ref("Reasoning")),
    }),
    obj({ threadId: nonEmpty(), response: str() }),
    {
      words: sessionWords(
        ["contextId", NON_EMPTY],
        ["threadId", NON_EMPTY],
        ["forkFromThreadId", NON_EMPTY_IF_GIVEN],
        ["message", NON_EMPTY],
        ["reasoning", `must be ${REASONING_VALUES} when provided`],
      ),
    },
  ),
  request(
    "session.ephemeral.close",
    "Closes an ephemeral context and interrupts its live threads.",
    withSession({ contextId: nonEmpty() }),
    obj({ closed: describe("false when the context was not present.", bool()) }),
    { words: sessionWords(["contextId", NON_EMPTY]) },
  ),

  // §4.7 Client-tool completion
  request(
    "session.clientTool.ack",
    "Acknowledges a client-tool call before its deadline, optionally overriding the running tool card.",
    withSession({ callId: nonEmpty(), presentation: opt(ref("Presentation")) }),
    obj({ accepted: describe("Start work only after true.", bool()) }),
    { ...SETTLES, words: sessionWords(["callId", NON_EMPTY], ["presentation", "is invalid", true]) },
  ),
  request(
    "session.clientTool.result",
    "Completes an acknowledged client-tool call with content, or fails it (before ack: preparation failure).",
    union(
      withSession({
        callId: nonEmpty(),
        ok: literal(true),
        content: clientToolContent,
        presentation: opt(ref("Presentation")),
      }),
      withSession({ callId: nonEmpty(), ok: literal(false), error: str(), presentation: opt(ref("Presentation")) }),
    ),
    obj({ accepted: describe("false: not yet acknowledged, or the call is no longer waiting; do not retry.", bool()) }),
    { ...SETTLES, words: sessionWords(["callId", NON_EMPTY]) },
  ),
];

/** Method names in `ready` order for each version; entries outside a version drop out. */
export const methodDefinitions: Record<string, Schema> = {
  MethodName: oneOfStrings(tauMethods.map((m) => (m.versions ? during(m.versions, m.name) : m.name))),
};
