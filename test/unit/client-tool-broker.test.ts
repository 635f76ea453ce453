import { describe, expect, it } from "vitest";
import type { ClientToolDefinition, SessionClientToolCallMessage, SessionClientToolCancelMessage } from "../../generated/tau-v18.js";
import { ClientToolBroker, type ClientToolAcknowledgement, type ClientToolBrokerOptions } from "../../src/host/client-tool-broker.js";
import { HOST_TOOL_NAMES } from "../../src/registry/tau/index.js";
import { ProtocolValidators } from "../../src/validation/validator.js";

const tau = ProtocolValidators.shared().get("tau", 18);

type Sent = { connectionId: string; message: SessionClientToolCallMessage | SessionClientToolCancelMessage };

/** A broker whose outgoing messages are collected (and schema-checked) instead of sent on a socket. */
function setup(overrides: Partial<ClientToolBrokerOptions> = {}) {
  const sent: Sent[] = [];
  const acks: ClientToolAcknowledgement[] = [];
  const broker = new ClientToolBroker({
    ackDeadlineMs: 5000,
    defaultExecutionDeadlineMs: 60000,
    hostToolNames: HOST_TOOL_NAMES,
    send: (connectionId, message) => {
      expect(tau.message("server", message)).toMatchObject({ ok: true, issues: [] });
      sent.push({ connectionId, message });
    },
    onAcknowledged: (ack) => acks.push(ack),
    ...overrides,
  });
  const calls = () => sent.filter((s) => s.message.type === "session.clientTool.call").map((s) => s.message as SessionClientToolCallMessage);
  const cancels = () => sent.filter((s) => s.message.type === "session.clientTool.cancel");
  return { broker, sent, acks, calls, cancels };
}

const tool = (name: string, extra: Partial<ClientToolDefinition> = {}): ClientToolDefinition => ({
  name,
  description: `${name} tool`,
  parameters: { type: "object", properties: {} },
  ...extra,
});

const text = (t: string) => [{ type: "text" as const, text: t }];

/** Registers conn-1 with `tools`, attaches it to s1 and starts one call; returns the dispatched message. */
function startCall(ctx: ReturnType<typeof setup>, tools = [tool("ask_user")], signal?: AbortSignal) {
  ctx.broker.register("conn-1", tools);
  ctx.broker.attach("conn-1", "s1");
  const outcome = ctx.broker.call("s1", "main", tools[0].name, { question: "ok?" }, signal);
  const message = ctx.calls().at(-1)!;
  return { outcome, message, callId: message.callId };
}

describe("ClientToolBroker registration and attachment", () => {
  it("rejects a host tool name and duplicate names", () => {
    const { broker } = setup();
    expect(() => broker.register("c", [tool("bash")])).toThrow(/"bash" conflicts with a host tool/);
    expect(() => broker.register("c", [tool("tau_docs")])).toThrow(/host tool/);
    expect(() => broker.register("c", [tool("pick"), tool("other"), tool("pick")])).toThrow(/"pick" is advertised more than once/);
    // A refused list registers nothing, so a valid first registration still works.
    broker.register("c", [tool("pick")]);
    broker.attach("c", "s");
    expect(broker.toolsFor("s").map((t) => t.name)).toEqual(["pick"]);
  });

  it("keeps the first registration of a connection", () => {
    const { broker } = setup();
    broker.register("c", [tool("first")]);
    broker.register("c", [tool("second")]);
    broker.attach("c", "s");
    expect(broker.toolsFor("s").map((t) => t.name)).toEqual(["first"]);
  });

  it("refuses to attach a connection whose tool name another attached connection provides", () => {
    const { broker } = setup();
    broker.register("a", [tool("shared"), tool("only_a")]);
    broker.register("b", [tool("only_b"), tool("shared")]);
    broker.register("c", [tool("only_c")]);
    broker.attach("a", "s1");
    broker.attach("a", "s1"); // idempotent
    expect(() => broker.attach("b", "s1")).toThrow(/"shared" is already provided by another client attached to session s1/);
    broker.attach("c", "s1");
    broker.attach("b", "s2"); // another session is unaffected
    expect(broker.toolsFor("s1").map((t) => t.name)).toEqual(["shared", "only_a", "only_c"]);
    expect(broker.toolsFor("s2").map((t) => t.name)).toEqual(["only_b", "shared"]);

    broker.detach("a", "s1");
    broker.attach("b", "s1"); // the name is free again
    expect(broker.toolsFor("s1").map((t) => t.name).sort()).toEqual(["only_b", "only_c", "shared"]);
  });

  it("forgets a disconnected connection's tools everywhere", () => {
    const { broker } = setup();
    broker.register("a", [tool("t")]);
    broker.attach("a", "s1");
    broker.attach("a", "s2");
    broker.disconnect("a");
    expect(broker.toolsFor("s1")).toEqual([]);
    expect(broker.toolsFor("s2")).toEqual([]);
  });
});

describe("ClientToolBroker calls", () => {
  it("runs a full lifecycle: call, ack with presentation, result", async () => {
    const ctx = setup();
    const { outcome, message, callId } = startCall(ctx, [tool("ask_user", { executionTimeoutMs: 1234 })]);
    expect(ctx.sent).toHaveLength(1);
    expect(ctx.sent[0].connectionId).toBe("conn-1");
    expect(message).toEqual({
      version: 18,
      type: "session.clientTool.call",
      sessionId: "s1",
      agentId: "main",
      callId,
      toolName: "ask_user",
      arguments: { question: "ok?" },
      ackDeadlineMs: 5000,
      executionDeadlineMs: 1234,
    });

    const running = { subject: "Asking", details: [{ text: "waiting for the user" }] };
    expect(ctx.broker.ack("conn-1", { sessionId: "s1", callId, presentation: running })).toEqual({ accepted: true });
    expect(ctx.broker.ack("conn-1", { sessionId: "s1", callId })).toEqual({ accepted: false });
    expect(ctx.acks).toEqual([{ sessionId: "s1", agentId: "main", callId, toolName: "ask_user", presentation: running }]);

    const finished = { subject: "Answered", metadata: [] };
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: true, content: text("yes"), presentation: finished })).toEqual({ accepted: true });
    await expect(outcome).resolves.toEqual({ status: "succeeded", content: text("yes"), presentation: finished });
    expect(ctx.cancels()).toEqual([]);
  });

  it("uses the default execution deadline and a fresh call id per call", () => {
    const ctx = setup();
    const first = startCall(ctx);
    ctx.broker.call("s1", "sub-1", "ask_user", {});
    const [a, b] = ctx.calls();
    expect(a.executionDeadlineMs).toBe(60000);
    expect(b.agentId).toBe("sub-1");
    expect(a.callId).not.toBe(b.callId);
    ctx.broker.disconnect("conn-1");
    return first.outcome;
  });

  it("refuses a success result before the ack and keeps the call waiting", async () => {
    const ctx = setup();
    const { outcome, callId } = startCall(ctx);
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: true, content: text("early") })).toEqual({ accepted: false });
    expect(ctx.broker.ack("conn-1", { sessionId: "s1", callId })).toEqual({ accepted: true });
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: true, content: [] })).toEqual({ accepted: true });
    await expect(outcome).resolves.toEqual({ status: "succeeded", content: [] });
  });

  it("treats an error before the ack as a preparation failure", async () => {
    const ctx = setup();
    const { outcome, callId } = startCall(ctx);
    const card = { subject: "Could not prepare" };
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: false, error: "bad arguments", presentation: card })).toEqual({ accepted: true });
    await expect(outcome).resolves.toEqual({ status: "failed", error: "bad arguments", prepared: false, presentation: card });
    expect(ctx.broker.ack("conn-1", { sessionId: "s1", callId })).toEqual({ accepted: false });
  });

  it("treats an error after the ack as an execution failure", async () => {
    const ctx = setup();
    const { outcome, callId } = startCall(ctx);
    ctx.broker.ack("conn-1", { sessionId: "s1", callId });
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: false, error: "crashed" })).toEqual({ accepted: true });
    await expect(outcome).resolves.toEqual({ status: "failed", error: "crashed", prepared: true });
  });

  it("accepts only the first result", async () => {
    const ctx = setup();
    const { outcome, callId } = startCall(ctx);
    ctx.broker.ack("conn-1", { sessionId: "s1", callId });
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: true, content: text("one") })).toEqual({ accepted: true });
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: true, content: text("two") })).toEqual({ accepted: false });
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: false, error: "late" })).toEqual({ accepted: false });
    await expect(outcome).resolves.toEqual({ status: "succeeded", content: text("one") });
  });

  it("refuses ack and result for unknown calls, other connections and other sessions", async () => {
    const ctx = setup();
    const { outcome, callId } = startCall(ctx);
    ctx.broker.register("conn-2", []);
    ctx.broker.attach("conn-2", "s1");
    expect(ctx.broker.ack("conn-1", { sessionId: "s1", callId: "no-such-call" })).toEqual({ accepted: false });
    expect(ctx.broker.ack("conn-2", { sessionId: "s1", callId })).toEqual({ accepted: false });
    expect(ctx.broker.ack("conn-1", { sessionId: "s2", callId })).toEqual({ accepted: false });
    expect(ctx.broker.result("conn-2", { sessionId: "s1", callId, ok: false, error: "not mine" })).toEqual({ accepted: false });
    // The rightful owner is still waited for.
    expect(ctx.broker.ack("conn-1", { sessionId: "s1", callId })).toEqual({ accepted: true });
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: true, content: [] })).toEqual({ accepted: true });
    await expect(outcome).resolves.toMatchObject({ status: "succeeded" });
  });

  it("blocks the call and cancels it when the ack deadline passes", async () => {
    const ctx = setup({ ackDeadlineMs: 50 });
    const { outcome, callId } = startCall(ctx);
    await expect(outcome).resolves.toEqual({ status: "blocked", reason: "timeout" });
    expect(ctx.cancels()).toEqual([
      { connectionId: "conn-1", message: { version: 18, type: "session.clientTool.cancel", sessionId: "s1", callId, reason: "timeout" } },
    ]);
    expect(ctx.broker.ack("conn-1", { sessionId: "s1", callId })).toEqual({ accepted: false });
  });

  it("cancels an acknowledged call when the execution deadline passes", async () => {
    const ctx = setup({ ackDeadlineMs: 50 });
    const { outcome, callId } = startCall(ctx, [tool("slow", { executionTimeoutMs: 150 })]);
    expect(ctx.broker.ack("conn-1", { sessionId: "s1", callId })).toEqual({ accepted: true });
    await expect(outcome).resolves.toEqual({ status: "cancelled", reason: "timeout" });
    expect(ctx.cancels().map((c) => c.message)).toEqual([{ version: 18, type: "session.clientTool.cancel", sessionId: "s1", callId, reason: "timeout" }]);
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: true, content: [] })).toEqual({ accepted: false });
  });

  it("cancels with aborted when the signal aborts, and sends nothing more afterwards", async () => {
    const ctx = setup({ ackDeadlineMs: 100 });
    const controller = new AbortController();
    const { outcome, callId } = startCall(ctx, [tool("t", { executionTimeoutMs: 200 })], controller.signal);
    ctx.broker.ack("conn-1", { sessionId: "s1", callId });
    controller.abort();
    await expect(outcome).resolves.toEqual({ status: "cancelled", reason: "aborted" });
    expect(ctx.cancels().map((c) => c.message)).toEqual([{ version: 18, type: "session.clientTool.cancel", sessionId: "s1", callId, reason: "aborted" }]);
    // The cleared deadlines never produce a second cancel.
    await new Promise((r) => setTimeout(r, 300));
    expect(ctx.cancels()).toHaveLength(1);
  });

  it("does not dispatch a call whose signal is already aborted", async () => {
    const ctx = setup();
    ctx.broker.register("conn-1", [tool("t")]);
    ctx.broker.attach("conn-1", "s1");
    await expect(ctx.broker.call("s1", "main", "t", {}, AbortSignal.abort())).resolves.toEqual({ status: "cancelled", reason: "aborted" });
    expect(ctx.sent).toEqual([]);
  });

  it("cancels a detached connection's calls in that session with client-detached", async () => {
    const ctx = setup();
    const { outcome, callId } = startCall(ctx);
    ctx.broker.attach("conn-1", "s2");
    const elsewhere = ctx.broker.call("s2", "main", "ask_user", {});
    ctx.broker.detach("conn-1", "s1");
    await expect(outcome).resolves.toEqual({ status: "cancelled", reason: "client-detached" });
    expect(ctx.cancels()).toEqual([
      { connectionId: "conn-1", message: { version: 18, type: "session.clientTool.cancel", sessionId: "s1", callId, reason: "client-detached" } },
    ]);
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: false, error: "late" })).toEqual({ accepted: false });
    // The call in the other session is untouched until the connection goes away.
    ctx.broker.disconnect("conn-1");
    await expect(elsewhere).resolves.toEqual({ status: "cancelled", reason: "client-detached" });
  });

  it("cancels every call of a disconnected connection without writing to it", async () => {
    const ctx = setup();
    const { outcome, callId } = startCall(ctx);
    ctx.broker.ack("conn-1", { sessionId: "s1", callId });
    ctx.broker.disconnect("conn-1");
    await expect(outcome).resolves.toEqual({ status: "cancelled", reason: "client-detached" });
    expect(ctx.cancels()).toEqual([]);
    expect(ctx.broker.result("conn-1", { sessionId: "s1", callId, ok: true, content: [] })).toEqual({ accepted: false });
  });

  it("fails at once, unprepared, when no attached client advertises the tool", async () => {
    const ctx = setup();
    ctx.broker.register("conn-1", [tool("mine")]);
    ctx.broker.attach("conn-1", "s1");
    ctx.broker.register("conn-2", [tool("theirs")]); // registered but not attached to s1
    const outcome = await ctx.broker.call("s1", "main", "theirs", {});
    expect(outcome).toMatchObject({ status: "failed", prepared: false });
    expect(outcome.status === "failed" && outcome.error).toMatch(/client tool "theirs" is not available in session s1/);
    expect(ctx.sent).toEqual([]);
  });

  it("settles as host-failed when the call cannot be sent", async () => {
    const ctx = setup({
      send: () => {
        throw new Error("socket closed");
      },
    });
    ctx.broker.register("conn-1", [tool("t")]);
    ctx.broker.attach("conn-1", "s1");
    await expect(ctx.broker.call("s1", "main", "t", {})).resolves.toEqual({ status: "cancelled", reason: "host-failed" });
  });
});
