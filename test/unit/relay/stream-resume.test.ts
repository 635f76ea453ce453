import { describe, expect, it } from "vitest";
import { acpSessionReattach } from "../../../src/cli/dialects/acp/relay-resume.js";
import { AskSubscriptionResume } from "../../../src/cli/dialects/ask/relay-resume.js";
import { codexThreadReattach } from "../../../src/cli/dialects/codex/relay-resume.js";

/**
 * What a --remote relay repeats on a new link, apart from the sockets: the Ask cursor check and
 * the renumbering after a log began again, and the sessions Codex and ACP clients opened.
 */

const event = (seq: number, type: string, payload: Record<string, unknown> = {}) => ({ seq, type, payload });
const forward = (resume: AskSubscriptionResume, sessionId: string, e: ReturnType<typeof event>) => resume.forwarded("session/event", { sessionId, event: e });

/** A gateway whose log of session "s" holds `events`, answering the relay's session/events reads. */
const gatewayWith = (events: ReturnType<typeof event>[]) => async (method: string, params: Record<string, unknown>) => {
  expect(method).toBe("session/events");
  const after = params.afterSeq as number;
  return { result: { sessionId: params.sessionId, events: events.filter((e) => e.seq > after).slice(0, params.limit as number), hasMore: false } };
};

function followed(): AskSubscriptionResume {
  const resume = new AskSubscriptionResume();
  resume.answered("session/subscribe", { sessionId: "s" }, { subscription: { sessionId: "s", deliveryKind: "replay" } });
  for (const e of [event(1, "session.created", { sessionId: "s" }), event(2, "turn.started", { turnId: "t1" }), event(3, "turn.completed", { turnId: "t1", response: "hi" })]) forward(resume, "s", e);
  return resume;
}

describe("Ask subscriptions on a new link", () => {
  it("resume at the cursor when the gateway's event there is the one forwarded", async () => {
    const resume = followed();
    const told: unknown[] = [];
    await resume.prepare(gatewayWith([event(1, "session.created", { sessionId: "s" }), event(2, "turn.started", { turnId: "t1" }), event(3, "turn.completed", { turnId: "t1", response: "hi" }), event(4, "turn.started", { turnId: "t2" })]), (m) => told.push(m));
    expect(told).toEqual([]);
    expect(resume.replays()).toEqual([{ method: "session/subscribe", params: { sessionId: "s", deliveryKind: "replay", afterSeq: 3 } }]);
    expect(resume.toClient({ method: "session/event", params: { sessionId: "s", event: event(4, "turn.started", { turnId: "t2" }) } })).toBeUndefined();
  });

  it("tell the client the log began again, and number the new log after the seqs it had, both ways", async () => {
    const resume = followed();
    const told: unknown[] = [];
    // The restarted gateway's log: a new session.created at 1, then something else where the cursor was.
    await resume.prepare(gatewayWith([event(1, "session.created", { sessionId: "s" }), event(2, "turn.started", { turnId: "t9" }), event(3, "model.streaming", { delta: "x" })]), (m) => told.push(m));
    expect(told).toEqual([{ method: "session/event", params: { sessionId: "s", event: { type: "session.reset", seq: 4, payload: { cause: "resync" } } } }]);
    expect(resume.replays()).toEqual([{ method: "session/subscribe", params: { sessionId: "s", deliveryKind: "replay", afterSeq: 0 } }]);

    // The new log's seq 1 reaches the client as 5; its requests' cursors are read back.
    expect(resume.toClient({ method: "session/event", params: { sessionId: "s", event: event(1, "session.created", { sessionId: "s" }) } })).toEqual({
      method: "session/event",
      params: { sessionId: "s", event: event(5, "session.created", { sessionId: "s" }) },
    });
    expect(resume.toGateway({ id: 7, method: "session/events", params: { sessionId: "s", afterSeq: 6 } })).toEqual({ id: 7, method: "session/events", params: { sessionId: "s", afterSeq: 2 } });
    expect(resume.toGateway({ id: 8, method: "session/events", params: { sessionId: "s", afterSeq: 2 } })).toEqual({ id: 8, method: "session/events", params: { sessionId: "s", afterSeq: 0 } });
    expect(resume.toGateway({ id: 9, method: "session/events", params: { sessionId: "other", afterSeq: 6 } })).toBeUndefined();
    expect(resume.toClient({ id: 7, result: { sessionId: "s", events: [event(3, "model.streaming", { delta: "x" })], hasMore: false } }, "session/events")).toEqual({
      id: 7,
      result: { sessionId: "s", events: [event(7, "model.streaming", { delta: "x" })], hasMore: false },
    });
    expect(resume.toClient({ id: 10, result: { subscription: { sessionId: "s", deliveryKind: "replay" }, snapshot: [event(2, "turn.started", { turnId: "t9" })] } }, "session/subscribe")).toEqual({
      id: 10,
      result: { subscription: { sessionId: "s", deliveryKind: "replay" }, snapshot: [event(6, "turn.started", { turnId: "t9" })] },
    });
  });

  it("after a second restart, number the reset after the last seq the client had, in its numbering", async () => {
    const resume = followed();
    await resume.prepare(gatewayWith([event(1, "session.created", { sessionId: "s" })]), () => undefined);
    forward(resume, "s", event(1, "session.created", { sessionId: "s" }));
    forward(resume, "s", event(2, "turn.started", { turnId: "t9" }));
    const told: any[] = [];
    await resume.prepare(gatewayWith([event(1, "session.created", { sessionId: "s" })]), (m) => told.push(m));
    // The client had 1-3, the reset at 4, then the second log's 1-2 as 5-6: the next reset is 7.
    expect(told.map((m) => m.params.event)).toEqual([{ type: "session.reset", seq: 7, payload: { cause: "resync" } }]);
  });

  it("leave the subscribe to the gateway's own rules when it refuses to read the log", async () => {
    const resume = followed();
    const told: unknown[] = [];
    const answers = await resume.prepare(async () => ({ error: { code: -32602, message: "history lost" } }), (m) => told.push(m));
    expect(answers).toEqual([{ error: { code: -32602, message: "history lost" } }]);
    expect(told).toEqual([]);
    expect(resume.replays()).toEqual([{ method: "session/subscribe", params: { sessionId: "s", deliveryKind: "replay", afterSeq: 3 } }]);
    resume.refused({ sessionId: "s" });
    expect(resume.replays()).toEqual([]);
  });
});

describe("Codex threads and ACP sessions on a new link", () => {
  it("Codex: every thread started or resumed is resumed again without its turns; one the gateway refused is let go", () => {
    const resume = codexThreadReattach();
    resume.answered("thread/start", {}, { thread: { id: "a" } });
    resume.answered("thread/resume", { threadId: "b" }, { thread: { id: "b" } });
    resume.answered("thread/list", {}, { data: [{ id: "c" }] });
    const replays = resume.replays();
    expect(replays).toEqual([
      { method: "thread/resume", params: { threadId: "a", excludeTurns: true } },
      { method: "thread/resume", params: { threadId: "b", excludeTurns: true } },
    ]);
    resume.refused(replays[0]!.params);
    expect(resume.replays()).toEqual([{ method: "thread/resume", params: { threadId: "b", excludeTurns: true } }]);
  });

  it("ACP: every session made, loaded or resumed is resumed again (no MCP servers repeated); a closed one is not", () => {
    const resume = acpSessionReattach();
    resume.answered("session/new", { cwd: "/w", mcpServers: [] }, { sessionId: "a" });
    resume.answered("session/load", { sessionId: "b", cwd: "/w", mcpServers: [{ name: "x" }] }, {});
    resume.answered("session/resume", { sessionId: "c", cwd: "/v", additionalDirectories: ["/d"] }, {});
    resume.answered("session/close", { sessionId: "a" }, {});
    expect(resume.replays()).toEqual([
      { method: "session/resume", params: { sessionId: "b", cwd: "/w" } },
      { method: "session/resume", params: { sessionId: "c", cwd: "/v", additionalDirectories: ["/d"] } },
    ]);
  });
});
