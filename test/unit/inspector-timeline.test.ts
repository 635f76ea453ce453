import { describe, expect, it } from "vitest";
import { answerWords, buildTimeline, decisionWords, frameEventKey, interactionsOf, sessionIdsOf, tauDeltaOf, type TimelineFrame } from "../../inspector/timeline.js";

/** The inspector page's session logic, with no DOM: the cross-dialect timeline and the approvals panel. */

const S = "sess-1";
let index = 0;
const frame = (over: Partial<TimelineFrame> & { json?: unknown }): TimelineFrame => {
  const { json, ...rest } = over;
  return {
    connection: "codex-2",
    dialect: "codex",
    index: ++index,
    direction: "server",
    kind: "notification",
    time: `2026-01-01T00:00:${String(index).padStart(2, "0")}.000Z`,
    verdict: { status: "valid" },
    ...(json === undefined ? {} : { message: JSON.stringify(json) }),
    ...rest,
  };
};
const askEvent = (seq: number, type: string, cause = true, sessionId = S) =>
  frame({
    connection: "ask-1",
    dialect: "ask",
    method: "session/event",
    json: { jsonrpc: "2.0", method: "session/event", params: { sessionId, event: { seq, type, payload: {} } } },
    ...(cause ? { cause: { sessionId, seq, type } } : {}),
  });

const EVENTS = [
  { seq: 1, type: "session.created", payload: { sessionId: S } },
  { seq: 2, type: "turn.started", payload: { turnId: "t1" } },
  { seq: 3, type: "approval.required", payload: { id: "act_1", toolName: "echo-json", args: { a: 7 } } },
  { seq: 4, type: "approval.updated", payload: { id: "act_1", status: "approved" } },
];

describe("frameEventKey", () => {
  it("takes the cause the gateway attached, else the event an Ask session/event carries, else nothing", () => {
    expect(frameEventKey(frame({ method: "turn/started", cause: { sessionId: S, seq: 2, type: "turn.started" } }))).toEqual({ sessionId: S, seq: 2, type: "turn.started" });
    expect(frameEventKey(askEvent(1, "session.created", false))).toEqual({ sessionId: S, seq: 1, type: "session.created" });
    expect(frameEventKey(frame({ method: "turn/started", json: { method: "turn/started", params: { threadId: S } } }))).toBeUndefined();
    expect(frameEventKey(frame({ connection: "ask-1", dialect: "ask", direction: "client", method: "session/event", json: { method: "session/event", params: { sessionId: S, event: { seq: 1 } } } }))).toBeUndefined();
  });

  it("lists the sessions frames were sent for, once each, first seen first", () => {
    expect(sessionIdsOf([askEvent(1, "session.created", true, "b"), askEvent(1, "session.created", true, "a"), askEvent(2, "turn.started", true, "b")])).toEqual(["b", "a"]);
  });
});

describe("buildTimeline", () => {
  it("puts under each event the frames it became in every dialect, in the order they were sent", () => {
    const askStarted = askEvent(2, "turn.started");
    const codexStatus = frame({ method: "thread/status/changed", cause: { sessionId: S, seq: 2, type: "turn.started" } });
    const codexStarted = frame({ method: "turn/started", cause: { sessionId: S, seq: 2, type: "turn.started" } });
    const acpUpdate = frame({ connection: "acp-3", dialect: "acp", method: "session/update", cause: { sessionId: S, seq: 3, type: "approval.required" } });
    const otherSession = frame({ method: "turn/started", cause: { sessionId: "other", seq: 2, type: "turn.started" } });
    const uncaused = frame({ kind: "response", json: { id: 1, result: {} } });
    const rows = buildTimeline(S, EVENTS, [askEvent(1, "session.created", false), codexStatus, askStarted, codexStarted, acpUpdate, otherSession, uncaused]);
    expect(rows.map((r) => [r.seq, r.type, r.frames.map((f) => `${f.connection} ${f.method}`)])).toEqual([
      [1, "session.created", ["ask-1 session/event"]],
      [2, "turn.started", ["codex-2 thread/status/changed", "ask-1 session/event", "codex-2 turn/started"]],
      [3, "approval.required", ["acp-3 session/update"]],
      [4, "approval.updated", []],
    ]);
  });

  it("shows an event known only from its frames (not fetched yet) under the type they name, in seq order", () => {
    const rows = buildTimeline(S, EVENTS.slice(0, 1), [askEvent(3, "tool.use"), askEvent(2, "turn.started")]);
    expect(rows.map((r) => [r.seq, r.type, r.frames.length])).toEqual([
      [1, "session.created", 0],
      [2, "turn.started", 1],
      [3, "tool.use", 1],
    ]);
  });

  it("puts a Tau delta sent to a /tau client under every event translated from it", () => {
    const delta = (revision: number, sessionId = S) =>
      frame({ connection: "tau-4", dialect: "tau", kind: "event", method: "session.delta", json: { version: 18, type: "session.delta", sessionId, fromRevision: revision - 1, toRevision: revision } });
    const events = [
      { seq: 2, type: "turn.started", payload: {}, tau: { from: 5, to: 5 } },
      { seq: 3, type: "model.streaming", payload: {}, tau: { from: 6, to: 8 } },
      { seq: 4, type: "turn.completed", payload: {}, tau: { from: 9, to: 9 } },
      { seq: 5, type: "approval.required", payload: { id: "act_1" } },
    ];
    const [d5, d7, d9, d10, other] = [delta(5), delta(7), delta(9), delta(10), delta(5, "other")];
    const rows = buildTimeline(S, events, [d5, d7, d9, d10, other, frame({ connection: "tau-4", dialect: "tau", direction: "client", kind: "request", method: "session.observe", json: { type: "request" } })]);
    expect(rows.map((r) => [r.seq, r.frames])).toEqual([
      [2, [d5]],
      [3, [d7]],
      [4, [d9]],
      [5, []],
    ]);
    expect(tauDeltaOf(d9)).toEqual({ sessionId: S, revision: 9 });
    expect(tauDeltaOf(askEvent(1, "session.created"))).toBeUndefined();
  });

  it("files the frames that ask clients about an interaction under the event that announced it", () => {
    const asked = frame({ kind: "request", method: "item/commandExecution/requestApproval", id: 0, cause: { sessionId: S, interactionId: "act_1" } } as Partial<TimelineFrame>);
    const rows = buildTimeline(S, EVENTS, [asked, frame({ kind: "request", method: "x", cause: { sessionId: S, interactionId: "act_9" } })]);
    expect(rows.find((r) => r.seq === 3)!.frames).toEqual([asked]);
    expect(rows.flatMap((r) => r.frames)).toHaveLength(1);
  });
});

describe("interactionsOf", () => {
  it("says who was asked, who answered what and when, and how it ended", () => {
    const askAsked = frame({ connection: "ask-1", dialect: "ask", kind: "request", method: "interaction/requestPermission", cause: { sessionId: S, interactionId: "act_1" } });
    const codexAsked = frame({ kind: "request", method: "item/commandExecution/requestApproval", cause: { sessionId: S, interactionId: "act_1" } });
    const codexAnswer = frame({ direction: "client", kind: "response", answers: { index: codexAsked.index, latencyMs: 5 }, json: { id: 0, result: { decision: "decline" } } });
    const withdrawn = frame({ method: "serverRequest/resolved", cause: { sessionId: S, interactionId: "act_1" } });
    const askApprove = frame({
      connection: "ask-1",
      dialect: "ask",
      direction: "client",
      kind: "request",
      method: "interaction/approve",
      json: { id: 5, method: "interaction/approve", params: { sessionId: S, interactionId: "act_1", scope: "session" } },
    });
    const elsewhere = frame({ direction: "client", kind: "response", answers: { index: 999, latencyMs: 1 }, json: { id: 9, result: {} } });
    const decision = { sessionId: S, interactionId: "act_1", action: "approve", scope: "once", by: "ops", at: "2026-01-01T00:00:00.500Z" };
    const [item, ...rest] = interactionsOf(S, EVENTS, [], [askAsked, codexAsked, codexAnswer, withdrawn, askApprove, elsewhere], [decision, { ...decision, sessionId: "other" }]);
    expect(rest).toEqual([]);
    expect(item).toMatchObject({ id: "act_1", kind: "approval", seq: 3, pending: false, payload: { toolName: "echo-json" }, outcome: { seq: 4, status: "approved" } });
    expect(item!.asked.map((f) => f.method)).toEqual(["interaction/requestPermission", "item/commandExecution/requestApproval"]);
    expect(item!.withdrawn.map((f) => f.method)).toEqual(["serverRequest/resolved"]);
    expect(item!.answers.map((a) => [a.by, a.dialect, a.words])).toEqual([
      ["operator ops", "inspector", "approved once"],
      ["codex-2", "codex", 'decision "decline"'],
      ["ask-1", "ask", 'interaction/approve "session"'],
    ]);
  });

  it("takes an Ask client's approve-all as the answer to the approvals open when it was sent", () => {
    const events = [
      { seq: 3, type: "approval.required", payload: { id: "act_1", toolName: "a" } },
      { seq: 4, type: "approval.updated", payload: { id: "act_1", status: "rejected" } },
      { seq: 5, type: "approval.required", payload: { id: "act_2", toolName: "b" } },
      { seq: 6, type: "approval.updated", payload: { id: "act_2", status: "approved" } },
      { seq: 7, type: "approval.required", payload: { id: "act_3", toolName: "c" } },
    ];
    const seen = (seq: number, type: string) => askEvent(seq, type);
    const approveAll = frame({
      connection: "ask-1",
      dialect: "ask",
      direction: "client",
      kind: "request",
      method: "interaction/approve-all",
      json: { id: 8, method: "interaction/approve-all", params: { sessionId: S } },
    });
    const frames = [seen(3, "approval.required"), seen(4, "approval.updated"), seen(5, "approval.required"), approveAll, seen(6, "approval.updated"), seen(7, "approval.required")];
    expect(interactionsOf(S, events, [], frames, []).map((i) => [i.id, i.answers.map((a) => a.words)])).toEqual([
      ["act_1", []],
      ["act_2", ["interaction/approve-all"]],
      ["act_3", []],
    ]);
  });

  it("keeps an interaction pending until its outcome is in the log, and lists one known only from the pending list", () => {
    const items = interactionsOf(
      S,
      EVENTS.slice(0, 3),
      [
        { id: "act_1", kind: "approval", payload: { toolName: "echo-json" } },
        { id: "ask_2", kind: "user_input", payload: { prompt: "Colour?" } },
      ],
      [],
      [],
    );
    expect(items.map((i) => [i.id, i.kind, i.pending, i.outcome])).toEqual([
      ["act_1", "approval", true, undefined],
      ["ask_2", "user_input", true, undefined],
    ]);
    expect(interactionsOf(S, EVENTS, [{ id: "act_1", kind: "approval" }], [], [])[0]!.pending).toBe(false);
  });

  it("follows a plan: proposed, asked of a Codex client and an editor, answered by an Ask client's plan/reject, withdrawn, rejected", () => {
    const events = [
      { seq: 3, type: "plan.proposed", payload: { id: "plan_1", plan: "- one step" } },
      { seq: 4, type: "plan.rejected", payload: { id: "plan_1", plan: "- one step", feedback: "smaller" } },
      { seq: 5, type: "plan.proposed", payload: { id: "plan_2", plan: "- smaller" } },
    ];
    const codexAsked = frame({ kind: "request", method: "item/tool/requestUserInput", cause: { sessionId: S, seq: 3, type: "plan.proposed" } });
    const acpAsked = frame({ connection: "acp-3", dialect: "acp", kind: "request", method: "session/request_permission", cause: { sessionId: S, seq: 3, type: "plan.proposed" } });
    const planReject = frame({
      connection: "ask-1",
      dialect: "ask",
      direction: "client",
      kind: "request",
      method: "plan/reject",
      json: { id: 4, method: "plan/reject", params: { sessionId: S, feedback: "smaller" } },
    });
    const acpCancel = frame({ connection: "acp-3", dialect: "acp", method: "$/cancel_request", cause: { sessionId: S, seq: 4, type: "plan.rejected" } });
    const frames = [askEvent(3, "plan.proposed"), codexAsked, acpAsked, planReject, askEvent(4, "plan.rejected"), acpCancel, askEvent(5, "plan.proposed")];
    const [first, second, ...rest] = interactionsOf(S, events, [{ id: "plan_2", kind: "plan", payload: { id: "plan_2", plan: "- smaller" } }], frames, []);
    expect(rest).toEqual([]);
    expect(first).toMatchObject({ id: "plan_1", kind: "plan", pending: false, payload: { plan: "- one step" }, outcome: { seq: 4, status: "rejected", feedback: "smaller" } });
    expect(first!.asked).toEqual([codexAsked, acpAsked]);
    expect(first!.withdrawn).toEqual([acpCancel]);
    expect(first!.answers.map((a) => [a.by, a.words])).toEqual([["ask-1", 'plan/reject "smaller"']]);
    // Proposed after the plan/reject: not what it answered.
    expect(second).toMatchObject({ id: "plan_2", kind: "plan", pending: true, answers: [] });
  });

  it("counts the asking and withdrawing done as the announcing and the outcome events are translated (ACP)", () => {
    const acpAsked = frame({ connection: "acp-3", dialect: "acp", kind: "request", method: "session/request_permission", cause: { sessionId: S, seq: 3, type: "approval.required" } });
    const acpUpdate = frame({ connection: "acp-3", dialect: "acp", method: "session/update", cause: { sessionId: S, seq: 3, type: "approval.required" } });
    const acpCancel = frame({ connection: "acp-3", dialect: "acp", method: "$/cancel_request", cause: { sessionId: S, seq: 4, type: "approval.updated" } });
    const laterUpdate = frame({ connection: "acp-3", dialect: "acp", method: "session/update", cause: { sessionId: S, seq: 4, type: "approval.updated" } });
    const [item] = interactionsOf(S, EVENTS, [], [acpAsked, acpUpdate, acpCancel, laterUpdate], []);
    expect(item!.asked).toEqual([acpAsked]);
    expect(item!.withdrawn).toEqual([acpCancel]);
  });
});

describe("the words of answers", () => {
  it("names a decision, an outcome, an error, a method with its detail", () => {
    expect(answerWords(frame({ json: { id: 1, result: { decision: "accept" } } }))).toBe('decision "accept"');
    expect(answerWords(frame({ json: { id: 1, result: { outcome: { outcome: "selected", optionId: "allow" } } } }))).toBe('outcome {"outcome":"selected","optionId":"allow"}');
    expect(answerWords(frame({ json: { id: 1, error: { code: -1, message: "no" } } }))).toBe("error: no");
    expect(answerWords(frame({ json: { id: 1, method: "interaction/respond", params: { response: "Blue" } } }))).toBe('interaction/respond "Blue"');
    expect(decisionWords({ sessionId: S, interactionId: "a", action: "approve", scope: "session", by: "x", at: "" })).toBe("approved for the session");
    expect(decisionWords({ sessionId: S, interactionId: "plan_1", action: "approve", by: "x", at: "" })).toBe("approved");
    expect(decisionWords({ sessionId: S, interactionId: "a", action: "reject", feedback: "too risky", by: "x", at: "" })).toBe("rejected: too risky");
    expect(decisionWords({ sessionId: S, interactionId: "a", action: "respond", response: "Blue", by: "x", at: "" })).toBe('answered "Blue"');
    expect(decisionWords({ sessionId: S, interactionId: "a", action: "decline", by: "x", at: "" })).toBe("declined");
    expect(decisionWords({ sessionId: S, interactionId: "a", action: "approve", scope: "once", by: "x", at: "", vote: { approvals: 1, needed: 2 } })).toBe("approved once (a vote, 1 of 2; not yet decided)");
    expect(decisionWords({ sessionId: S, interactionId: "a", action: "reject", by: "x", at: "", vote: { needed: 2 } })).toBe("rejected (a vote; not yet decided)");
  });
});
