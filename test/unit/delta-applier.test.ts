import { describe, expect, it } from "vitest";
import type {
  AgentRun,
  AssistantMessage,
  Change,
  DeltaCause,
  MessageRecord,
  SessionDeltaMessage,
  Snapshot,
  TimelineItem,
  ToolRun,
} from "../../generated/tau-v18.js";
import {
  applyChanges,
  applyDelta,
  checkSnapshotInvariants,
  DeltaGapError,
  InvalidDeltaError,
} from "../../src/tau/delta-applier.js";
import { ProtocolValidators } from "../../src/validation/validator.js";

const schema = ProtocolValidators.shared().get("tau", 18);

// ── fixture ─────────────────────────────────────────────────────────────────────────────────────

const usage = {
  input: 3,
  output: 2,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 5,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

const assistant = (
  content: AssistantMessage["content"],
  stopReason: AssistantMessage["stopReason"] = "stop",
): AssistantMessage => ({
  role: "assistant",
  content,
  api: "scripted",
  provider: "tau-gateway",
  model: "scripted-1",
  usage,
  stopReason,
  timestamp: 1300,
});

const draft = (id: string, content: AssistantMessage["content"] = []): MessageRecord => ({
  id,
  state: "draft",
  modelVisible: false,
  message: { role: "assistant", content, timestamp: 2000 },
});

const messageItem = (id: string, sequence: number, messageId: string): TimelineItem => ({
  type: "message",
  id,
  sequence,
  createdAt: 1000 + sequence,
  messageId,
});

const toolItem = (id: string, sequence: number, toolId: string): TimelineItem => ({
  type: "tool",
  id,
  sequence,
  createdAt: 1000 + sequence,
  toolId,
});

const agent: AgentRun = {
  id: "agent-1",
  title: "Explore the tree",
  availability: "idle",
  model: { provider: "tau-gateway", id: "scripted-1", reasoning: "none" },
  workingDirectory: "/tmp",
  createdAt: 1000,
  run: {
    revision: 1,
    startedAt: 1000,
    interruptRequested: false,
    status: "succeeded",
    finishedAt: 1100,
    response: "ok",
  },
  costTotal: 0,
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, contextWindowUsageTokens: 0, contextWindow: 128000 },
};

/**
 * A small finished session: system prompt, one user turn with a bash tool call, its result, the
 * final reply, a facet on the tool, a notice about the subagent, and a reload operation.
 */
function baseSnapshot(): Snapshot {
  return {
    sessionId: "s1",
    attributes: { source: "test" },
    createdAt: 1000,
    revision: 5,
    agentState: {
      revision: 1,
      modelContextKey: "ctx-1",
      usageCheckpoint: { historyEntryId: "m4", modelContextKey: "ctx-1", tokens: 5 },
    },
    lifecycle: "idle",
    costTotal: 0.25,
    settings: { autoCompactThresholdTokens: null, effectiveAutoCompactThresholdTokens: 111616, personaId: "default" },
    bootstrap: {
      model: {
        id: "scripted-1",
        name: "Scripted",
        api: "scripted",
        provider: "tau-gateway",
        baseUrl: "",
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 128000,
        maxTokens: 8192,
      },
      prompt: { environmentTag: "local" },
    },
    catalog: {
      personas: [{ id: "default", label: "Default", subagentLaunchModels: [], source: "builtin" }],
      prompts: [],
      skills: [],
      mcpServers: [],
    },
    executionEnvironment: { kind: "local", cwd: "/tmp", home: "/root" },
    messages: [
      {
        id: "m0",
        state: "committed",
        modelVisible: true,
        message: { role: "system", content: "You are terse.", timestamp: 1000 },
      },
      {
        id: "m1",
        state: "committed",
        modelVisible: true,
        message: { role: "user", content: "list files", timestamp: 1001 },
      },
      {
        id: "m2",
        state: "committed",
        modelVisible: true,
        message: assistant(
          [
            { type: "text", text: "Running ls." },
            { type: "toolCall", id: "call-1", name: "bash", arguments: { command: "ls" } },
          ],
          "toolUse",
        ),
      },
      {
        id: "m3",
        state: "committed",
        modelVisible: true,
        message: {
          role: "toolResult",
          toolCallId: "call-1",
          toolName: "bash",
          content: [{ type: "text", text: "a.txt" }],
          isError: false,
          timestamp: 1200,
        },
      },
      { id: "m4", state: "committed", modelVisible: true, message: assistant([{ type: "text", text: "One file." }]) },
    ],
    turns: { m1: { userHistoryEntryId: "m1", state: "settled", outcome: { status: "completed", stopReason: "stop" } } },
    timeline: {
      epoch: 1,
      sequence: 7,
      items: [
        messageItem("i1", 1, "m1"),
        messageItem("i2", 2, "m2"),
        toolItem("i3", 3, "call-1"),
        messageItem("i4", 4, "m4"),
        {
          type: "notice",
          id: "i5",
          sequence: 5,
          createdAt: 1005,
          notice: {
            kind: "agent.notice",
            version: 1,
            severity: "info",
            subject: { type: "agent", id: "agent-1" },
            presentation: { title: "Subagent finished" },
            data: {},
          },
        },
        { type: "operation", id: "i6", sequence: 6, createdAt: 1006, operationId: "op-1" },
      ],
    },
    tools: {
      "call-1": {
        id: "call-1",
        toolCallId: "call-1",
        toolName: "bash",
        facetIds: ["f1"],
        status: "succeeded",
        call: { messageId: "m2", contentIndex: 1 },
        startedAt: 1100,
        finishedAt: 1200,
        resultMessageId: "m3",
      },
    },
    operations: { "op-1": { id: "op-1", kind: "reload", startedAt: 1006, status: "succeeded", finishedAt: 1007 } },
    agents: { "agent-1": agent },
    facets: {
      f1: {
        id: "f1",
        subject: { type: "tool", id: "call-1" },
        kind: "tool.bash.execution",
        version: 1,
        data: { exitCode: 0 },
      },
    },
  };
}

/** Frozen all the way down, so any mutation of an input by the applier throws in these tests. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const base = deepFreeze(baseSnapshot());

function expectSchemaValid(definition: string, value: unknown): void {
  const result = schema.check(definition, value);
  expect(result.issues, JSON.stringify(result.issues)).toEqual([]);
  expect(result.ok).toBe(true);
}

function delta(
  body: SessionDeltaMessage["delta"],
  options: { from?: number | null; to?: number; cause?: DeltaCause; sessionId?: string } = {},
): SessionDeltaMessage {
  const from = options.from === undefined ? base.revision : options.from;
  return {
    version: 18,
    type: "session.delta",
    sessionId: options.sessionId ?? base.sessionId,
    fromRevision: from,
    toRevision: options.to ?? (from ?? base.revision) + 1,
    cause: options.cause ?? { type: "assistant-stream" },
    delta: body,
  };
}

const patch = (changes: Change[], options: Parameters<typeof delta>[1] = {}) =>
  delta({ type: "snapshot.patch", changes }, options);

/** Applies a schema-valid patch to `snapshot` and returns the resulting (schema-checked) snapshot. */
function applyValid(changes: Change[], snapshot: Snapshot = base): Snapshot {
  const message = patch(changes, { from: snapshot.revision });
  expectSchemaValid("SessionDeltaMessage", message);
  const outcome = applyDelta(snapshot, message);
  expect(outcome.status).toBe("applied");
  expect(outcome.snapshot.revision).toBe(snapshot.revision + 1);
  expectSchemaValid("Snapshot", outcome.snapshot);
  return outcome.snapshot;
}

function invalidDelta(fn: () => unknown): InvalidDeltaError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidDeltaError);
    return err as InvalidDeltaError;
  }
  throw new Error("expected an InvalidDeltaError");
}

const message = (snapshot: Snapshot, id: string) => snapshot.messages.find((m) => m.id === id);

// ── tests ───────────────────────────────────────────────────────────────────────────────────────

describe("fixture", () => {
  it("is a valid v18 snapshot with intact references", () => {
    expectSchemaValid("Snapshot", base);
    expect(() => checkSnapshotInvariants(base)).not.toThrow();
  });
});

describe("applyDelta revision rules", () => {
  it("ignores stale patches and resets, returning the installed snapshot itself", () => {
    const garbage = patch([{ type: "message.append", message: base.messages[0] }], { from: 4, to: 5 });
    expect(applyDelta(base, garbage)).toEqual({ status: "stale", snapshot: base });
    expect(applyDelta(base, patch([], { from: 2, to: 3 })).snapshot).toBe(base);
    const oldReset = delta(
      { type: "snapshot.reset", snapshot: { ...baseSnapshot(), revision: 4 } },
      { from: null, to: 4, cause: { type: "resync" } },
    );
    expect(applyDelta(base, oldReset).status).toBe("stale");
  });

  it("reports a gap when the patch does not start at the installed revision", () => {
    for (const from of [3, 6, null]) {
      try {
        applyDelta(base, patch([{ type: "lifecycle.set", lifecycle: "running" }], { from, to: 9 }));
        expect.unreachable("a gap must throw");
      } catch (err) {
        expect(err).toBeInstanceOf(DeltaGapError);
        expect((err as DeltaGapError).expected).toBe(5);
        expect((err as DeltaGapError).received).toBe(from);
      }
    }
  });

  it("rejects a delta for another session before anything else", () => {
    const err = invalidDelta(() => applyDelta(base, patch([], { sessionId: "s2", from: 1, to: 2 })));
    expect(err.message).toContain('"s2"');
  });

  it("accepts a toRevision that skips ahead", () => {
    const outcome = applyDelta(base, patch([{ type: "lifecycle.set", lifecycle: "running" }], { from: 5, to: 42 }));
    expect(outcome.snapshot.revision).toBe(42);
    expect(outcome.snapshot.lifecycle).toBe("running");
  });

  it("applies a patch atomically: one bad change leaves the input untouched", () => {
    const before = structuredClone(base);
    const err = invalidDelta(() =>
      applyDelta(
        base,
        patch([
          { type: "lifecycle.set", lifecycle: "running" },
          { type: "message.append", message: { ...base.messages[1] } },
        ]),
      ),
    );
    expect(err.changeIndex).toBe(1);
    expect(err.message).toContain("change #1 message.append");
    expect(err.message).toContain('"m1" already exists');
    expect(base).toEqual(before);
  });

  it("rejects an unknown change kind loudly", () => {
    const unknown = { type: "goal.set", goal: null } as unknown as Change;
    const err = invalidDelta(() => applyDelta(base, patch([{ type: "cost.set", costTotal: 1 }, unknown])));
    expect(err.changeIndex).toBe(1);
    expect(err.reason).toBe('unknown change type "goal.set"');
  });

  it("refuses compaction and rewind causes on a patch", () => {
    const cause: DeltaCause = { type: "rewind", epoch: 1, cutoffSequence: 2 };
    invalidDelta(() => applyDelta(base, patch([], { cause })));
  });
});

describe("simple replacements", () => {
  it("agent-state.set, lifecycle.set, cost.set and settings.set replace their fields", () => {
    const next = applyValid([
      { type: "agent-state.set", agentState: { revision: 2, modelContextKey: "ctx-2" } },
      { type: "lifecycle.set", lifecycle: "running" },
      { type: "cost.set", costTotal: 1.5 },
      {
        type: "settings.set",
        settings: {
          autoCompactThresholdTokens: 60000,
          effectiveAutoCompactThresholdTokens: 60000,
          personaId: "default",
          reasoning: "high",
        },
      },
    ]);
    expect(next.agentState).toEqual({ revision: 2, modelContextKey: "ctx-2" });
    expect(next.lifecycle).toBe("running");
    expect(next.costTotal).toBe(1.5);
    expect(next.settings.reasoning).toBe("high");
    expect(next.messages).toEqual(base.messages);
  });
});

describe("turn.set", () => {
  it("inserts, settles and tolerates an identical settled record", () => {
    const running = applyValid([{ type: "turn.set", turn: { userHistoryEntryId: "m9", state: "running" } }]);
    expect(running.turns.m9).toEqual({ userHistoryEntryId: "m9", state: "running" });
    const settled = {
      userHistoryEntryId: "m9",
      state: "settled",
      outcome: { status: "aborted", stopReason: "aborted" },
    } as const;
    const done = applyValid([{ type: "turn.set", turn: settled }], running);
    expect(done.turns.m9).toEqual(settled);
    expect(applyValid([{ type: "turn.set", turn: structuredClone(settled) }], done).turns.m9).toEqual(settled);
  });

  it("never changes a settled record", () => {
    const rerun = invalidDelta(() =>
      applyDelta(base, patch([{ type: "turn.set", turn: { userHistoryEntryId: "m1", state: "running" } }])),
    );
    expect(rerun.reason).toContain("already settled");
    invalidDelta(() =>
      applyDelta(
        base,
        patch([
          {
            type: "turn.set",
            turn: {
              userHistoryEntryId: "m1",
              state: "settled",
              outcome: { status: "completed", stopReason: "length" },
            },
          },
        ]),
      ),
    );
  });
});

describe("messages", () => {
  it("message.append pushes a new message and refuses a known id", () => {
    const user: MessageRecord = {
      id: "m5",
      state: "committed",
      modelVisible: true,
      message: { role: "user", content: "again", timestamp: 3000 },
    };
    const next = applyValid([{ type: "message.append", message: user }]);
    expect(next.messages.at(-1)).toEqual(user);
    expect(next.messages).toHaveLength(base.messages.length + 1);
    const err = invalidDelta(() =>
      applyDelta(next, patch([{ type: "message.append", message: user }], { from: next.revision })),
    );
    expect(err.changeIndex).toBe(0);
  });

  it("message.replace replaces by id in place, or pushes when missing", () => {
    const replaced: MessageRecord = { ...base.messages[4], message: assistant([{ type: "text", text: "Two files." }]) };
    const pushed: MessageRecord = {
      id: "m6",
      state: "discarded",
      modelVisible: false,
      message: { role: "user", content: "x", timestamp: 1 },
    };
    const next = applyValid([
      { type: "message.replace", message: replaced },
      { type: "message.replace", message: pushed },
    ]);
    expect(next.messages[4]).toEqual(replaced);
    expect(next.messages.map((m) => m.id)).toEqual(["m0", "m1", "m2", "m3", "m4", "m6"]);
  });

  it("only messages[0] may be a system message without metadata", () => {
    const prompt: MessageRecord = {
      id: "m7",
      state: "committed",
      modelVisible: true,
      message: { role: "system", content: "again", timestamp: 1 },
    };
    expect(invalidDelta(() => applyChanges(base, [{ type: "message.append", message: prompt }])).reason).toContain(
      "without metadata",
    );
    const instruction: MessageRecord = {
      ...prompt,
      message: { role: "system", content: "be brief", timestamp: 1, metadata: { type: "instruction", version: 1 } },
    };
    expect(applyValid([{ type: "message.append", message: instruction }]).messages.at(-1)).toEqual(instruction);
  });
});

describe("message.content.append", () => {
  const streaming = () => applyValid([{ type: "message.append", message: draft("m5") }]);
  const append = (snapshot: Snapshot, parts: { text?: string; thinking?: string }, timestamp = 2100) =>
    applyValid([{ type: "message.content.append", messageId: "m5", ...parts, timestamp }], snapshot);

  it("streams text, then creates thinking just before the first text block", () => {
    let s = append(streaming(), { text: "Hel" });
    s = append(s, { thinking: "hmm" });
    s = append(s, { text: "lo" }, 2200);
    s = append(s, { thinking: ", right" }, 2300);
    expect(message(s, "m5")!.message).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm, right" },
        { type: "text", text: "Hello" },
      ],
      timestamp: 2300,
    });
    expect(message(s, "m5")!.state).toBe("draft");
  });

  it("puts thinking first when it arrives first or together with text", () => {
    const first = append(append(streaming(), { thinking: "plan" }), { text: "go" });
    expect(message(first, "m5")!.message.role === "assistant" && message(first, "m5")!.message.content).toEqual([
      { type: "thinking", thinking: "plan" },
      { type: "text", text: "go" },
    ]);
    const both = append(streaming(), { text: "go", thinking: "plan" });
    expect(message(both, "m5")!.message).toEqual(message(first, "m5")!.message);
  });

  it("creates the text block at the end, after tool calls, and keeps other blocks", () => {
    const withCall = applyValid([
      {
        type: "message.append",
        message: draft("m5", [{ type: "toolCall", id: "call-2", name: "bash", arguments: {} }]),
      },
    ]);
    const s = append(withCall, { text: "done" });
    expect(message(s, "m5")!.message.role === "assistant" && message(s, "m5")!.message.content).toEqual([
      { type: "toolCall", id: "call-2", name: "bash", arguments: {} },
      { type: "text", text: "done" },
    ]);
  });

  it("rejects appends to anything but a draft assistant message, and empty appends", () => {
    const s = streaming();
    const bad = (change: Change, snapshot = s) => invalidDelta(() => applyChanges(snapshot, [change]));
    expect(bad({ type: "message.content.append", messageId: "m4", text: "x", timestamp: 1 }).reason).toContain(
      "not a draft assistant",
    );
    expect(bad({ type: "message.content.append", messageId: "m1", text: "x", timestamp: 1 }).reason).toContain(
      "not a draft assistant",
    );
    expect(bad({ type: "message.content.append", messageId: "nope", text: "x", timestamp: 1 }).reason).toContain(
      '"nope"',
    );
    expect(
      bad({ type: "message.content.append", messageId: "m5", text: "", thinking: "", timestamp: 1 }).reason,
    ).toContain("non-empty");
    expect(bad({ type: "message.content.append", messageId: "m5", timestamp: 1 }).reason).toContain("non-empty");
  });

  it("notices when an inserted thinking block moves a streaming tool call", () => {
    const s = applyValid([
      {
        type: "message.append",
        message: draft("m5", [
          { type: "text", text: "Let me look." },
          { type: "toolCall", id: "call-2", name: "bash", arguments: {} },
        ]),
      },
      {
        type: "tool.set",
        tool: {
          id: "call-2",
          toolCallId: "call-2",
          toolName: "bash",
          facetIds: [],
          status: "streaming",
          origin: { messageId: "m5", contentIndex: 1 },
        },
      },
      { type: "timeline.append", item: toolItem("i8", 8, "call-2") },
    ]);
    expect(append(s, { text: " More." }).timeline).toEqual(s.timeline);
    const err = invalidDelta(() =>
      applyChanges(s, [{ type: "message.content.append", messageId: "m5", thinking: "hm", timestamp: 1 }]),
    );
    expect(err.reason).toContain("is not a toolCall block");
  });
});

describe("timeline", () => {
  it("timeline.append pushes and raises the high-water mark; it must exceed the mark", () => {
    const next = applyValid([
      {
        type: "message.append",
        message: {
          id: "m5",
          state: "committed",
          modelVisible: true,
          message: { role: "user", content: "hi", timestamp: 1 },
        },
      },
      { type: "timeline.append", item: messageItem("i9", 9, "m5") },
    ]);
    expect(next.timeline.sequence).toBe(9);
    expect(next.timeline.items.at(-1)).toEqual(messageItem("i9", 9, "m5"));
    expect(
      invalidDelta(() => applyChanges(base, [{ type: "timeline.append", item: messageItem("i9", 7, "m1") }])).reason,
    ).toContain("does not exceed the high-water mark 7");
    expect(
      invalidDelta(() => applyChanges(base, [{ type: "timeline.append", item: messageItem("i1", 8, "m1") }])).reason,
    ).toContain('"i1" already exists');
  });

  it("timeline.remove drops an item and keeps the high-water mark", () => {
    const next = applyValid([{ type: "timeline.remove", id: "i4" }]);
    expect(next.timeline.items.map((i) => i.id)).toEqual(["i1", "i2", "i3", "i5", "i6"]);
    expect(next.timeline.sequence).toBe(7);
    expect(invalidDelta(() => applyChanges(base, [{ type: "timeline.remove", id: "i99" }])).reason).toContain('"i99"');
  });

  it("timeline.advance raises the mark within the active epoch only", () => {
    expect(applyValid([{ type: "timeline.advance", epoch: 1, sequence: 12 }]).timeline.sequence).toBe(12);
    expect(
      invalidDelta(() => applyChanges(base, [{ type: "timeline.advance", epoch: 2, sequence: 12 }])).reason,
    ).toContain("epoch 2");
    expect(
      invalidDelta(() => applyChanges(base, [{ type: "timeline.advance", epoch: 1, sequence: 7 }])).reason,
    ).toContain("does not exceed");
  });
});

describe("keyed records", () => {
  const newCall: ToolRun = {
    id: "call-2",
    toolCallId: "call-2",
    toolName: "bash",
    facetIds: [],
    status: "queued",
    call: { messageId: "m5", contentIndex: 0 },
  };
  const withNewTool = () =>
    applyValid([
      {
        type: "message.append",
        message: {
          id: "m5",
          state: "committed",
          modelVisible: true,
          message: assistant([{ type: "toolCall", id: "call-2", name: "bash", arguments: {} }], "toolUse"),
        },
      },
      { type: "tool.set", tool: newCall },
      { type: "timeline.append", item: toolItem("i8", 8, "call-2") },
    ]);

  it("tool.set upserts by id and tool.remove deletes", () => {
    const added = withNewTool();
    expect(added.tools["call-2"]).toEqual(newCall);
    const running = applyValid([{ type: "tool.set", tool: { ...newCall, status: "running", startedAt: 5000 } }], added);
    expect(running.tools["call-2"].status).toBe("running");
    const removed = applyValid(
      [
        { type: "tool.remove", id: "call-2" },
        { type: "timeline.remove", id: "i8" },
      ],
      running,
    );
    expect(Object.keys(removed.tools)).toEqual(["call-1"]);
    expect(invalidDelta(() => applyChanges(base, [{ type: "tool.remove", id: "call-2" }])).reason).toBe(
      'no tool "call-2" to remove',
    );
  });

  it("a tool needs exactly one timeline item and a matching toolCall block", () => {
    const msg: Change = {
      type: "message.append",
      message: {
        id: "m5",
        state: "committed",
        modelVisible: true,
        message: assistant([{ type: "toolCall", id: "call-2", name: "bash", arguments: {} }], "toolUse"),
      },
    };
    expect(invalidDelta(() => applyChanges(base, [msg, { type: "tool.set", tool: newCall }])).reason).toContain(
      'tool "call-2" must appear exactly once in the timeline (found 0)',
    );
    expect(
      invalidDelta(() =>
        applyChanges(base, [
          msg,
          { type: "tool.set", tool: { ...newCall, call: { messageId: "m5", contentIndex: 1 } } },
          { type: "timeline.append", item: toolItem("i8", 8, "call-2") },
        ]),
      ).reason,
    ).toContain("is not a toolCall block");
    expect(
      invalidDelta(() => applyChanges(base, [{ type: "tool.set", tool: { ...base.tools["call-1"], id: "call-x" } }]))
        .reason,
    ).toContain('has a different toolCallId "call-1"');
  });

  it("operation.set and operation.remove are keyed by id", () => {
    const next = applyValid([
      {
        type: "operation.set",
        operation: { id: "op-2", kind: "manual-compaction", startedAt: 5000, status: "running" },
      },
      {
        type: "timeline.append",
        item: { type: "operation", id: "i8", sequence: 8, createdAt: 5000, operationId: "op-2" },
      },
    ]);
    expect(next.operations["op-2"].status).toBe("running");
    const finished = applyValid(
      [
        {
          type: "operation.set",
          operation: {
            id: "op-2",
            kind: "manual-compaction",
            startedAt: 5000,
            status: "failed",
            finishedAt: 5100,
            error: "boom",
          },
        },
      ],
      next,
    );
    expect(finished.operations["op-2"]).toMatchObject({ status: "failed", error: "boom" });
    const removed = applyValid(
      [
        { type: "timeline.remove", id: "i8" },
        { type: "operation.remove", id: "op-2" },
      ],
      finished,
    );
    expect(Object.keys(removed.operations)).toEqual(["op-1"]);
    expect(invalidDelta(() => applyChanges(base, [{ type: "operation.remove", id: "op-2" }])).changeIndex).toBe(0);
    expect(invalidDelta(() => applyChanges(base, [{ type: "operation.remove", id: "op-1" }])).reason).toContain(
      "missing operation",
    );
  });

  it("agent.set and agent.remove are keyed by id; a notice subject must survive", () => {
    const agent2: AgentRun = {
      ...agent,
      id: "agent-2",
      availability: "running",
      run: { revision: 1, startedAt: 5000, interruptRequested: false, status: "running" },
    };
    const next = applyValid([{ type: "agent.set", agent: agent2 }]);
    expect(Object.keys(next.agents)).toEqual(["agent-1", "agent-2"]);
    expect(Object.keys(applyValid([{ type: "agent.remove", id: "agent-2" }], next).agents)).toEqual(["agent-1"]);
    expect(invalidDelta(() => applyChanges(base, [{ type: "agent.remove", id: "agent-1" }])).reason).toContain(
      'missing subject agent "agent-1"',
    );
    expect(invalidDelta(() => applyChanges(base, [{ type: "agent.remove", id: "agent-9" }])).reason).toContain(
      'no agent "agent-9"',
    );
  });

  it("facet.set and facet.remove are keyed by id; a tool's facets must exist and be about it", () => {
    const facet = {
      id: "f2",
      subject: { type: "message" as const, id: "m4" },
      kind: "message.flag",
      version: 1,
      data: {},
    };
    const next = applyValid([{ type: "facet.set", facet }]);
    expect(next.facets.f2).toEqual(facet);
    expect(Object.keys(applyValid([{ type: "facet.remove", id: "f2" }], next).facets)).toEqual(["f1"]);
    expect(invalidDelta(() => applyChanges(base, [{ type: "facet.remove", id: "f1" }])).reason).toContain(
      'missing facet "f1"',
    );
    const detached = applyValid([
      { type: "tool.set", tool: { ...base.tools["call-1"], facetIds: [] } },
      { type: "facet.remove", id: "f1" },
    ]);
    expect(detached.facets).toEqual({});
    expect(
      invalidDelta(() =>
        applyChanges(base, [{ type: "facet.set", facet: { ...facet, subject: { type: "tool", id: "nope" } } }]),
      ).reason,
    ).toContain('missing subject tool "nope"');
    expect(invalidDelta(() => applyChanges(base, [{ type: "facet.remove", id: "f9" }])).reason).toBe(
      'no facet "f9" to remove',
    );
  });
});

describe("broken references", () => {
  it("a timeline item must reference an existing message", () => {
    const err = invalidDelta(() =>
      applyDelta(base, patch([{ type: "timeline.append", item: messageItem("i8", 8, "ghost") }])),
    );
    expect(err.reason).toContain('references a missing message "ghost"');
  });

  // Appends and replacements of messages, appended timeline items and the agent state are checked
  // for what they can break, not with the whole snapshot (checkLocalInvariants): the same errors.
  it("a replaced message must still be what the tools that point at it need", () => {
    const noCall: MessageRecord = { ...base.messages[2], message: assistant([{ type: "text", text: "no call" }], "toolUse") };
    expect(invalidDelta(() => applyChanges(base, [{ type: "message.replace", message: noCall }])).reason).toContain(
      'tool "call-1" call (message "m2", content index 1) is not a toolCall block with id "call-1"',
    );
    const notAResult: MessageRecord = { ...base.messages[3], message: assistant([{ type: "text", text: "x" }]) };
    expect(invalidDelta(() => applyChanges(base, [{ type: "message.replace", message: notAResult }])).reason).toContain(
      'resultMessageId "m3" is not a toolResult message',
    );
    const systemLater: MessageRecord = { ...base.messages[4], message: { role: "system", content: "late", timestamp: 1 } };
    expect(invalidDelta(() => applyChanges(base, [{ type: "message.replace", message: systemLater }])).reason).toContain(
      "without metadata",
    );
  });

  it("an appended timeline item must be its tool's or operation's only one", () => {
    expect(invalidDelta(() => applyChanges(base, [{ type: "timeline.append", item: toolItem("i8", 8, "call-1") }])).reason).toContain(
      'tool "call-1" must appear exactly once in the timeline (found 2)',
    );
    const secondOperationItem = { type: "operation" as const, id: "i8", sequence: 8, createdAt: 1008, operationId: "op-1" };
    expect(invalidDelta(() => applyChanges(base, [{ type: "timeline.append", item: secondOperationItem }])).reason).toContain(
      'operation "op-1" must appear exactly once in the timeline (found 2)',
    );
    expect(invalidDelta(() => applyChanges(base, [{ type: "timeline.append", item: toolItem("i8", 8, "ghost") }])).reason).toContain(
      'references a missing tool "ghost"',
    );
  });

  it("checks an appended item and message on the patched snapshot, so the rest of the patch counts", () => {
    const message: MessageRecord = { id: "m5", state: "committed", modelVisible: true, message: assistant([{ type: "text", text: "later" }]) };
    const next = applyValid([{ type: "timeline.append", item: messageItem("i8", 8, "m5") }, { type: "message.append", message }]);
    expect(next.timeline.items.at(-1)).toEqual(messageItem("i8", 8, "m5"));
    expect(
      invalidDelta(() => applyChanges(base, [{ type: "message.append", message }, { type: "timeline.append", item: messageItem("i8", 8, "m6") }])).reason,
    ).toContain('references a missing message "m6"');
  });

  it("every tool must appear in the timeline", () => {
    expect(invalidDelta(() => applyChanges(base, [{ type: "timeline.remove", id: "i3" }])).reason).toContain(
      'tool "call-1" must appear exactly once',
    );
  });

  it("the usage checkpoint must name a finished, usable assistant message in the current context", () => {
    const errored: MessageRecord = { ...base.messages[4], message: assistant([{ type: "text", text: "x" }], "error") };
    expect(invalidDelta(() => applyChanges(base, [{ type: "message.replace", message: errored }])).reason).toContain(
      "stopped with error",
    );
    const hidden: MessageRecord = { ...base.messages[4], modelVisible: false };
    expect(invalidDelta(() => applyChanges(base, [{ type: "message.replace", message: hidden }])).reason).toContain(
      "not model-visible",
    );
    const otherContext = {
      revision: 2,
      modelContextKey: "ctx-2",
      usageCheckpoint: { historyEntryId: "m4", modelContextKey: "ctx-1", tokens: 5 },
    };
    expect(
      invalidDelta(() => applyChanges(base, [{ type: "agent-state.set", agentState: otherContext }])).reason,
    ).toContain("modelContextKey");
    const onUser = {
      revision: 2,
      modelContextKey: "ctx-1",
      usageCheckpoint: { historyEntryId: "m1", modelContextKey: "ctx-1", tokens: 5 },
    };
    expect(invalidDelta(() => applyChanges(base, [{ type: "agent-state.set", agentState: onUser }])).reason).toContain(
      "not a finished assistant",
    );
  });

  it("map keys must equal the embedded ids", () => {
    const misKeyed = { ...baseSnapshot(), turns: { m2: { userHistoryEntryId: "m1", state: "running" as const } } };
    expect(invalidDelta(() => checkSnapshotInvariants(misKeyed)).reason).toContain(
      'turns key "m2" differs from its userHistoryEntryId "m1"',
    );
    const s = baseSnapshot();
    const toolKey = { ...s, tools: { other: s.tools["call-1"] } };
    expect(invalidDelta(() => checkSnapshotInvariants(toolKey)).reason).toContain(
      'tools key "other" differs from its id "call-1"',
    );
  });

  it("treats ids that look like Object.prototype keys as ordinary ids", () => {
    expect(invalidDelta(() => applyChanges(base, [{ type: "tool.remove", id: "__proto__" }])).reason).toContain(
      '"__proto__"',
    );
    const next = applyValid([{ type: "turn.set", turn: { userHistoryEntryId: "__proto__", state: "running" } }]);
    expect(Object.keys(next.turns)).toEqual(["m1", "__proto__"]);
    expect(Object.getPrototypeOf(next.turns)).toBe(Object.prototype);
  });
});

describe("resets", () => {
  /** The base session after compaction: only the prompt and a summary remain, in the next epoch. */
  function compacted(revision: number, epoch: number): Snapshot {
    const s = baseSnapshot();
    return {
      ...s,
      revision,
      agentState: { revision: 2, modelContextKey: "ctx-1" },
      messages: [
        s.messages[0],
        {
          id: "m9",
          state: "committed",
          modelVisible: true,
          message: { role: "user", content: "Summary: listed files.", timestamp: 4000 },
        },
      ],
      timeline: { epoch, sequence: 1, items: [messageItem("c1", 1, "m9")] },
      tools: {},
      operations: {},
      facets: {},
    };
  }

  /** The base session rewound to before the tool ran: items up to sequence 2 remain, the mark stays 7. */
  function rewound(revision: number, overrides: Partial<Snapshot["timeline"]> = {}): Snapshot {
    const s = baseSnapshot();
    return {
      ...s,
      revision,
      agentState: { revision: 2, modelContextKey: "ctx-1" },
      messages: s.messages.slice(0, 3),
      turns: {},
      timeline: { epoch: 1, sequence: 7, items: s.timeline.items.slice(0, 2), ...overrides },
      tools: {},
      operations: {},
      facets: {},
    };
  }

  const compaction = (previousEpoch: number, epoch: number): DeltaCause => ({
    type: "compaction",
    previousEpoch,
    epoch,
    kind: "manual",
    cutType: "turn-boundary",
    retainedMessageCount: 1,
  });

  const reset = (snapshot: Snapshot, cause: DeltaCause, to = snapshot.revision) =>
    delta({ type: "snapshot.reset", snapshot }, { from: null, to, cause });

  it("installs a compaction into the next epoch", () => {
    const message = reset(compacted(6, 2), compaction(1, 2));
    expectSchemaValid("SessionDeltaMessage", message);
    const outcome = applyDelta(base, message);
    expect(outcome.status).toBe("applied");
    expect(outcome.snapshot).toEqual(compacted(6, 2));
    expectSchemaValid("Snapshot", outcome.snapshot);
  });

  it("rejects compactions whose epochs do not line up", () => {
    expect(invalidDelta(() => applyDelta(base, reset(compacted(6, 3), compaction(2, 3)))).reason).toContain(
      "installed timeline is in epoch 1",
    );
    expect(invalidDelta(() => applyDelta(base, reset(compacted(6, 3), compaction(1, 3)))).reason).toContain(
      "previousEpoch + 1",
    );
    expect(invalidDelta(() => applyDelta(base, reset(compacted(6, 1), compaction(1, 2)))).reason).toContain(
      "reset timeline is in epoch 1",
    );
  });

  it("installs a rewind that keeps the epoch and the high-water mark", () => {
    const message = reset(rewound(8), { type: "rewind", epoch: 1, cutoffSequence: 2 });
    expectSchemaValid("SessionDeltaMessage", message);
    const outcome = applyDelta(base, message);
    expect(outcome.snapshot.timeline).toEqual({ epoch: 1, sequence: 7, items: base.timeline.items.slice(0, 2) });
    expectSchemaValid("Snapshot", outcome.snapshot);
  });

  it("rejects rewinds with a bad cutoff, a moved high-water mark, late items or another epoch", () => {
    const rewind = (cutoffSequence: number, epoch = 1): DeltaCause => ({ type: "rewind", epoch, cutoffSequence });
    expect(invalidDelta(() => applyDelta(base, reset(rewound(8), rewind(9)))).reason).toContain(
      "past the installed high-water mark 7",
    );
    expect(invalidDelta(() => applyDelta(base, reset(rewound(8, { sequence: 2 }), rewind(2)))).reason).toContain(
      "must keep the high-water mark 7",
    );
    expect(invalidDelta(() => applyDelta(base, reset(rewound(8), rewind(1)))).reason).toContain(
      'kept timeline item "i2" with sequence 2',
    );
    expect(invalidDelta(() => applyDelta(base, reset(rewound(8, { epoch: 2 }), rewind(2, 2)))).reason).toContain(
      "installed timeline is in epoch 1",
    );
  });

  it("installs a resync whatever it contains, as long as it is for this session and revision", () => {
    const fresh = compacted(20, 7);
    const outcome = applyDelta(base, reset(fresh, { type: "resync" }));
    expect(outcome.snapshot).toBe(fresh);
    expectSchemaValid("Snapshot", outcome.snapshot);
    expect(invalidDelta(() => applyDelta(base, reset(fresh, { type: "resync" }, 21))).reason).toContain(
      "toRevision is 21",
    );
    expect(
      invalidDelta(() => applyDelta(base, reset({ ...fresh, sessionId: "s2" }, { type: "resync" }))).reason,
    ).toContain('"s2"');
  });

  it("checks the references of a reset snapshot", () => {
    const broken = { ...compacted(6, 2), timeline: { epoch: 2, sequence: 1, items: [messageItem("c1", 1, "ghost")] } };
    expect(invalidDelta(() => applyDelta(base, reset(broken, { type: "resync" }))).reason).toContain(
      'missing message "ghost"',
    );
  });
});
