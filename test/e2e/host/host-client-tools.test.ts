import { afterEach, describe, expect, it } from "vitest";
import type { ClientToolDefinition, SessionClientToolCallMessage, Snapshot } from "../../../generated/tau-v18.js";
import { png1x1 } from "../../support/messages.js";
import { errorOf, HostHarness, resultOf, textOf, type TauTestClient, type TestHostOptions } from "../../support/tau-client.js";

/**
 * Client tools on the embedded Tau host (spec §1.6, §7): registration on the first initialize,
 * attachment to sessions, the call/ack/result/cancel lifecycle with both deadlines, and what
 * disconnecting, unobserving and interrupting do to an in-flight call.
 */

const lookup: ClientToolDefinition = {
  name: "lookup",
  description: "Looks a word up.",
  parameters: { type: "object", properties: { q: { type: "string" } } },
};

let h: HostHarness;

afterEach(async () => {
  await h.dispose();
});

async function setup(options: TestHostOptions = {}, tools: ClientToolDefinition[] = [lookup]) {
  h = new HostHarness();
  await h.start(options);
  return h.connectWithSession({ name: "tools", tools });
}

const callFor = (client: TauTestClient, sessionId: string, since = 0) =>
  client.waitFor<SessionClientToolCallMessage>((m) => m.type === "session.clientTool.call" && m.sessionId === sessionId, "session.clientTool.call", { since });

const cancelFor = (client: TauTestClient, callId: string) =>
  client.waitFor((m) => m.type === "session.clientTool.cancel" && m.callId === callId, `session.clientTool.cancel for ${callId}`);

const onlyTool = (snapshot: Snapshot) => {
  const tools = Object.values(snapshot.tools) as any[];
  expect(tools).toHaveLength(1);
  return tools[0];
};

const toolResultOf = (snapshot: Snapshot, tool: any) => snapshot.messages.find((m) => m.id === tool.resultMessageId)?.message as any;

describe("initialize", () => {
  it("returns the protocol version and methods; a repeat says alreadyInitialized", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    expect(client.ready.methods).toHaveLength(30);
    const first = resultOf(await client.initialize([lookup]));
    expect(first).toEqual({ protocolVersion: 18, methods: client.ready.methods, alreadyInitialized: false });
    // Tools in a later initialize are ignored, even invalid ones.
    const again = resultOf(await client.initialize([lookup, lookup]));
    expect(again.alreadyInitialized).toBe(true);
  });

  it("fails with internal_error for duplicate tool names", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    expect(errorOf(await client.initialize([lookup, { ...lookup }])).code).toBe("internal_error");
  });

  it("fails with internal_error for a host tool name", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    expect(errorOf(await client.initialize([{ ...lookup, name: "bash" }])).code).toBe("internal_error");
  });

  it("fails with internal_error when another attached client advertises the same name", async () => {
    const { sessionId } = await setup();
    const other = await h.connect("other");
    resultOf(await other.initialize([lookup]));
    expect((await other.fail("session.observe", { sessionId })).code).toBe("internal_error");
  });

  it("a refused attachment leaves the connection without the session's streams", async () => {
    const { client, sessionId } = await setup();
    const other = await h.connect("other");
    resultOf(await other.initialize([lookup]));
    expect((await other.fail("session.snapshot", { sessionId })).code).toBe("internal_error");
    await client.call("session.submit", { sessionId, text: "plain turn" });
    await other.call("session.list", {}); // a round trip after the turn's deltas
    expect(other.deltas(sessionId)).toEqual([]);
  });

  it("tools advertised after the connection registered a session are not attached to it until it registers again", async () => {
    h = new HostHarness();
    await h.start();
    const { client, sessionId } = await h.connectWithSession({ name: "driver" });
    const late = await h.connect("late");
    await late.call("session.observe", { sessionId });
    resultOf(await late.initialize([lookup]));

    await client.call("session.submit", { sessionId, text: "/tool lookup {}" });
    expect(onlyTool(await client.snapshot(sessionId))).toMatchObject({ toolName: "lookup", status: "failed" });
    expect(late.messagesOf("session.clientTool.call")).toEqual([]);

    // Registering the session again (after unobserve) attaches the tools.
    await late.call("session.unobserve", { sessionId });
    await late.call("session.observe", { sessionId });
    const turn = client.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call = await callFor(late, sessionId);
    await late.call("session.clientTool.ack", { sessionId, callId: call.callId });
    await late.call("session.clientTool.result", { sessionId, callId: call.callId, ok: true, content: [] });
    expect(resultOf(await turn.response).turn.status).toBe("completed");
  });
});

describe("a /tool turn", () => {
  it("calls the advertised tool; result before ack is not accepted; ack then result succeeds once", async () => {
    const { client, sessionId } = await setup();
    const turn = client.send("session.submit", { sessionId, text: '/tool lookup {"q":"x"}' });
    const call = await callFor(client, sessionId);
    expect(call).toMatchObject({ toolName: "lookup", arguments: { q: "x" }, ackDeadlineMs: 5000, executionDeadlineMs: 60000 });
    expect(call.agentId.length).toBeGreaterThan(0);

    const base = { sessionId, callId: call.callId };
    const early = { ...base, ok: true, content: [{ type: "text", text: "too early" }] };
    expect(await client.call("session.clientTool.result", early)).toEqual({ accepted: false });
    expect(await client.call("session.clientTool.ack", base)).toEqual({ accepted: true });
    const done = { ...base, ok: true, content: [{ type: "text", text: "found x" }] };
    expect(await client.call("session.clientTool.result", done)).toEqual({ accepted: true });
    expect(await client.call("session.clientTool.result", done)).toEqual({ accepted: false });

    expect(resultOf(await turn.response).turn).toEqual({ status: "completed", stopReason: "stop" });
    const snapshot = await client.snapshot(sessionId);
    const tool = onlyTool(snapshot);
    expect(tool).toMatchObject({ toolName: "lookup", status: "succeeded" });
    const toolResult = toolResultOf(snapshot, tool);
    expect(toolResult).toMatchObject({ role: "toolResult", toolName: "lookup", isError: false, content: [{ type: "text", text: "found x" }] });
    expect(client.messagesOf("session.clientTool.cancel")).toEqual([]);
  });

  it("an error result before ack is a preparation failure; after ack an execution failure", async () => {
    const { client, sessionId } = await setup();
    const first = client.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call1 = await callFor(client, sessionId);
    expect(await client.call("session.clientTool.result", { sessionId, callId: call1.callId, ok: false, error: "cannot prepare" })).toEqual({ accepted: true });
    expect(resultOf(await first.response).turn.status).toBe("completed");

    const since = client.mark();
    const second = client.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call2 = await callFor(client, sessionId, since);
    await client.call("session.clientTool.ack", { sessionId, callId: call2.callId });
    expect(await client.call("session.clientTool.result", { sessionId, callId: call2.callId, ok: false, error: "kaput" })).toEqual({ accepted: true });
    expect(resultOf(await second.response).turn.status).toBe("completed");

    const snapshot = await client.snapshot(sessionId);
    const tools = Object.values(snapshot.tools) as any[];
    expect(tools.map((t) => t.status)).toEqual(["failed", "failed"]);
    const results = tools.map((t) => toolResultOf(snapshot, t));
    expect(results.every((r) => r.isError === true)).toBe(true);
    expect(textOf(results[0])).toContain("cannot prepare");
    expect(textOf(results[1])).toContain("kaput");
  });

  it("an unknown or unattached tool gives a failed tool run and no call", async () => {
    h = new HostHarness();
    await h.start();
    // This client advertises the tool but never names the session, so its tool is not attached.
    const bystander = await h.connect("bystander");
    resultOf(await bystander.initialize([lookup]));
    const { client, sessionId } = await h.connectWithSession({ name: "plain" });

    const result = await client.call("session.submit", { sessionId, text: "/tool lookup {}" });
    expect(result.turn.status).toBe("completed");
    expect(onlyTool(await client.snapshot(sessionId))).toMatchObject({ toolName: "lookup", status: "failed" });
    await bystander.call("session.list", {});
    expect(bystander.messagesOf("session.clientTool.call")).toEqual([]);
  });
});

describe("ack and result rules", () => {
  it("only the owning connection can ack; unknown calls are not accepted; presentation and image content pass through", async () => {
    const { client, sessionId } = await setup();
    const other = await h.connect("other");
    await other.call("session.observe", { sessionId });
    expect(await client.call("session.clientTool.ack", { sessionId, callId: "no-such-call" })).toEqual({ accepted: false });

    const turn = client.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call = await callFor(client, sessionId);
    expect(await other.call("session.clientTool.ack", { sessionId, callId: call.callId })).toEqual({ accepted: false });
    expect(await client.call("session.clientTool.ack", { sessionId, callId: call.callId, presentation: { subject: "looking up", metadata: ["step 1"] } })).toEqual({ accepted: true });
    const content = [
      { type: "text", text: "a picture" },
      { type: "image", data: png1x1, mimeType: "image/png" },
    ];
    expect(await other.call("session.clientTool.result", { sessionId, callId: call.callId, ok: true, content })).toEqual({ accepted: false });
    expect(await client.call("session.clientTool.result", { sessionId, callId: call.callId, ok: true, content, presentation: { subject: "looked up", details: [] } })).toEqual({ accepted: true });
    expect(resultOf(await turn.response).turn.status).toBe("completed");
    const snapshot = await client.snapshot(sessionId);
    const tool = onlyTool(snapshot);
    expect(tool.status).toBe("succeeded");
    expect(toolResultOf(snapshot, tool).content).toEqual(content);
  });
});

describe("deadlines", () => {
  it("a missed ack deadline cancels the call with timeout and blocks the tool", async () => {
    const { client, sessionId } = await setup({ clientToolAckDeadlineMs: 200 });
    const turn = client.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call = await callFor(client, sessionId);
    expect(call.ackDeadlineMs).toBe(200);
    const cancel = await cancelFor(client, call.callId);
    expect(cancel).toEqual({ version: 18, type: "session.clientTool.cancel", sessionId, callId: call.callId, reason: "timeout" });
    expect(resultOf(await turn.response).turn.status).toBe("completed");
    expect(onlyTool(await client.snapshot(sessionId)).status).toBe("blocked");
    expect(await client.call("session.clientTool.ack", { sessionId, callId: call.callId })).toEqual({ accepted: false });
  });

  it("a missed execution deadline (host option) cancels the call with timeout", async () => {
    const { client, sessionId } = await setup({ clientToolExecutionDeadlineMs: 300 });
    const turn = client.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call = await callFor(client, sessionId);
    expect(call.executionDeadlineMs).toBe(300);
    expect(await client.call("session.clientTool.ack", { sessionId, callId: call.callId })).toEqual({ accepted: true });
    expect((await cancelFor(client, call.callId)).reason).toBe("timeout");
    expect(resultOf(await turn.response).turn.status).toBe("completed");
    expect(onlyTool(await client.snapshot(sessionId)).status).toBe("cancelled");
    expect(await client.call("session.clientTool.result", { sessionId, callId: call.callId, ok: true, content: [] })).toEqual({ accepted: false });
  });

  it("a tool's executionTimeoutMs overrides the host default", async () => {
    const { client, sessionId } = await setup({}, [{ ...lookup, executionTimeoutMs: 250 }]);
    const turn = client.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call = await callFor(client, sessionId);
    expect(call.executionDeadlineMs).toBe(250);
    await client.call("session.clientTool.ack", { sessionId, callId: call.callId });
    expect((await cancelFor(client, call.callId)).reason).toBe("timeout");
    expect(resultOf(await turn.response).turn.status).toBe("completed");
  });
});

describe("detach and interrupt", () => {
  it("a disconnect cancels the call while the turn goes on", async () => {
    const { client: owner, sessionId } = await setup();
    const driver = await h.connect("driver");
    await driver.call("session.observe", { sessionId });
    const turn = driver.send("session.submit", { sessionId, text: "/tool lookup {}\nafter the tool" });
    const call = await callFor(owner, sessionId);
    await owner.call("session.clientTool.ack", { sessionId, callId: call.callId });
    await owner.close();

    expect(resultOf(await turn.response).turn).toEqual({ status: "completed", stopReason: "stop" });
    const snapshot = await driver.snapshot(sessionId);
    expect(onlyTool(snapshot)).toMatchObject({ toolName: "lookup", status: "cancelled" });
    expect(snapshot.messages[snapshot.messages.length - 1].message.role).toBe("assistant");
  });

  it("unobserve cancels the owner's in-flight call with client-detached", async () => {
    const { client: owner, sessionId } = await setup();
    const driver = await h.connect("driver");
    await driver.call("session.observe", { sessionId });
    const turn = driver.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call = await callFor(owner, sessionId);
    await owner.call("session.clientTool.ack", { sessionId, callId: call.callId });
    expect(await owner.call("session.unobserve", { sessionId })).toEqual({ unobserved: true });
    expect((await cancelFor(owner, call.callId)).reason).toBe("client-detached");
    expect(resultOf(await turn.response).turn.status).toBe("completed");
    expect(onlyTool(await driver.snapshot(sessionId)).status).toBe("cancelled");
  });

  it("an interrupt cancels the call with aborted and ends the turn aborted", async () => {
    const { client, sessionId } = await setup();
    const turn = client.send("session.submit", { sessionId, text: "/tool lookup {}" });
    const call = await callFor(client, sessionId);
    await client.call("session.clientTool.ack", { sessionId, callId: call.callId });
    await client.call("session.interrupt", { sessionId });
    expect((await cancelFor(client, call.callId)).reason).toBe("aborted");
    expect(resultOf(await turn.response).turn).toEqual({ status: "aborted", stopReason: "aborted" });
    expect(onlyTool(await client.snapshot(sessionId)).status).toBe("cancelled");
    expect(await client.call("session.clientTool.result", { sessionId, callId: call.callId, ok: true, content: [] })).toEqual({ accepted: false });
  });
});
