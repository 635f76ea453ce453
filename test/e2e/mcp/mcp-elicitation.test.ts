import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { CALL_ECHO, ECHO_TOOL } from "../../support/echo-tool.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { sdkClient, stdioTransport, webSocketTransport, type RecordingTransport } from "../../support/mcp-client.js";

/**
 * MCP clients on sessions other clients use: the SDK client's tool call streams its reply as
 * progress and its approval comes as a form (elicitation/create) while an Ask client watches the
 * same session and sees the command run once; questions and plans come as forms too, and a client
 * that starts watching while one waits is asked about it; a client that cannot show forms is never asked and
 * nothing is decided for it; cancelling a call interrupts its turn. The MCP wire is checked against
 * the official schema.
 */

let gw: TestGateway;
const transports: RecordingTransport[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ commandTools: [ECHO_TOOL] });
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await gw?.stop();
});

/** An SDK client on the gateway's MCP WebSocket; with `answer`, it declares elicitation and answers each form so. */
async function mcpClient(answer?: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>): Promise<{ client: Client; asked: ElicitRequest[] }> {
  const transport = webSocketTransport(gw.rpcUrl.replace(/\/rpc$/, "/mcp/ws"));
  const client = sdkClient({ elicitation: answer !== undefined });
  const asked: ElicitRequest[] = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request);
      return answer(request);
    });
  }
  await client.connect(transport);
  transports.push(transport);
  clients.push(client);
  return { client, asked };
}

describe("an MCP client on a session an Ask client watches", () => {
  it("streams the reply as progress, answers the approval by elicitation, and the command runs once", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { client, asked } = await mcpClient(() => ({ action: "accept", content: { decision: "approve" } }));

    const progress: string[] = [];
    const result = await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: CALL_ECHO } }, undefined, { onprogress: (p) => void progress.push(p.message ?? "") });
    const reply = 'You said: Done\nTool echo-json returned: {"a":7}';
    expect(result.structuredContent).toEqual(expect.objectContaining({ sessionId, status: "completed", text: reply, usage: expect.objectContaining({ outputTokens: expect.any(Number) }) }));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.params).toEqual(expect.objectContaining({ mode: "form", message: expect.stringContaining("echo-json") }));
    expect(progress[0]).toBe('[waiting for approval act_1: echo-json {"a":7}]');
    // The SDK client hands a notification to its handler a microtask after reading it, and one read
    // in the same batch as the answer can be dropped by then: what streamed is the reply's start.
    const streamed = progress.slice(1).join("");
    expect(streamed.length).toBeGreaterThan(0);
    expect(reply.startsWith(streamed)).toBe(true);
    const sent = transports.at(-1)!.fromServer.flatMap((m) => ("method" in m && m.method === "notifications/progress" ? [m.params!.message as string] : []));
    expect(sent.slice(1).join("")).toBe(reply);

    const turnId = payloadsOf<{ turnId: string }>(ask.eventsOf(sessionId), "turn.started")[0]!.turnId;
    await waitForTerminal(ask, sessionId, turnId);
    expect(payloadsOf(ask.eventsOf(sessionId), "approval.updated")).toEqual([expect.objectContaining({ id: "act_1", status: "approved" })]);
    expect(payloadsOf(ask.eventsOf(sessionId), "tool.result").filter((r) => r.name === "echo-json")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);
    expect(ask.invalid).toEqual([]);
    ask.socket.terminate();
  });

  it("shares sessions both ways: the Ask client lists the one the MCP client started", async () => {
    const { client } = await mcpClient();
    const started = await client.callTool({ name: "tau", arguments: { prompt: "From MCP", cwd: gw.cwd } });
    const { sessionId } = started.structuredContent as { sessionId: string };
    const ask = await gw.client();
    await ask.request("initialize", { client: { name: "e2e", version: "1" } });
    const { sessions } = await ask.request("session/list", {});
    expect(sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(sessionId);
    const listed = await client.callTool({ name: "tau-sessions", arguments: {} });
    expect((listed.structuredContent as { sessions: Array<{ sessionId: string }> }).sessions.map((s) => s.sessionId)).toContain(sessionId);
    ask.socket.terminate();
  });

  it("rejects when the form is declined, never taking it for consent", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { client, asked } = await mcpClient(() => ({ action: "decline" }));
    await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: CALL_ECHO } });
    expect(asked).toHaveLength(1);
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "approval.updated").length === 1, "the approval to be decided");
    expect(payloadsOf(ask.eventsOf(sessionId), "approval.updated")).toEqual([expect.objectContaining({ status: "rejected", feedback: "the user declined" })]);
    expect(payloadsOf(ask.eventsOf(sessionId), "tool.result").filter((r) => r.name === "echo-json")).toEqual([expect.objectContaining({ isError: true })]);
    ask.socket.terminate();
  });

  it("declines a question whose form is declined: it goes unanswered at once and the tool fails with why", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { client, asked } = await mcpClient(() => ({ action: "decline" }));
    const result = await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: '/tool ask_user {"question":"Which colour?"}' } });
    expect(asked.map((r) => r.params.message)).toEqual(["Which colour?"]);
    expect(result.structuredContent).toEqual(expect.objectContaining({ status: "completed", text: "Tool ask_user failed: the user did not answer: the user declined" }));
    expect(payloadsOf(ask.eventsOf(sessionId), "input.resolved")).toEqual([expect.objectContaining({ status: "cancelled", reason: "the user declined" })]);
    ask.socket.terminate();
  });

  it("does not ask a client without elicitation: it answers with tau-answer, and cancelling a call interrupts its turn", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { client } = await mcpClient();
    const waiting = client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: CALL_ECHO } });
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "approval.required").length === 1, "the approval to be asked for");
    const answered = await client.callTool({ name: "tau-answer", arguments: { sessionId, action: "approve" } });
    expect(answered.structuredContent).toEqual({ sessionId, interactionId: "act_1", kind: "approval", action: "approve" });
    expect((await waiting).structuredContent).toEqual(expect.objectContaining({ status: "completed", text: expect.stringContaining('echo-json returned: {"a":7}') }));

    // A second call waits for an approval nobody gives; the client gives up on it.
    const controller = new AbortController();
    const cancelled = client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: CALL_ECHO } }, undefined, { signal: controller.signal });
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "approval.required").length === 2, "the second approval to be asked for");
    controller.abort("changed my mind");
    await expect(cancelled).rejects.toThrow();
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "turn.aborted").length === 1, "the turn to be interrupted");
    expect(payloadsOf(ask.eventsOf(sessionId), "tool.result").filter((r) => r.name === "echo-json" && !r.isError)).toHaveLength(1);
    // Its answer is not sent: the next request of the client is answered as usual.
    expect(await client.ping()).toEqual({});
    ask.socket.terminate();
  });

  it("puts a plan the agent proposes to the client as a form; approving it lets the agent carry it out", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { client, asked } = await mcpClient(() => ({ action: "accept", content: { decision: "approve" } }));
    const result = await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: '/tool submit_plan {"plan":"- read the code"}' } });
    expect(asked.map((r) => r.params.message)).toEqual([`Tau session ${sessionId} proposes a plan:\n\n- read the code`]);
    expect(result.structuredContent).toEqual(expect.objectContaining({ status: "completed", text: "Tool submit_plan returned: The user approved the plan. Carry it out now." }));
    expect(payloadsOf(ask.eventsOf(sessionId), "plan.approved")).toHaveLength(1);
    ask.socket.terminate();
  });

  it("asks a client that starts watching while a plan waits; its rejection with feedback decides, and it is asked once", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { turnId } = await ask.request("session/send", { sessionId, content: '/tool submit_plan {"plan":"- one step"}' });
    const planId = ((await ask.waitForEvent(sessionId, "plan.proposed")).payload as { id: string }).id;
    const { client, asked } = await mcpClient(() => ({ action: "accept", content: { decision: "reject", feedback: "Not now" } }));
    await client.subscribeResource({ uri: `tau://session/${sessionId}` });
    expect(await ask.waitForEvent(sessionId, "plan.rejected")).toMatchObject({ payload: { id: planId, feedback: "Not now" } });
    await waitForTerminal(ask, sessionId, turnId);
    expect(asked.map((r) => r.params.message)).toEqual([`Tau session ${sessionId} proposes a plan:\n\n- one step`]);
    ask.socket.terminate();
  });

  it("asks a client that starts watching while an approval waits, as it asks those watching when it opened", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { turnId } = await ask.request("session/send", { sessionId, content: CALL_ECHO });
    await ask.waitForEvent(sessionId, "approval.required");
    const { client, asked } = await mcpClient(() => ({ action: "accept", content: { decision: "approve" } }));
    await client.subscribeResource({ uri: `tau://session/${sessionId}` });
    expect(await waitForTerminal(ask, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    expect(asked.map((r) => r.params.message)).toEqual([expect.stringContaining("echo-json")]);
    expect(payloadsOf(ask.eventsOf(sessionId), "approval.updated")).toEqual([expect.objectContaining({ status: "approved" })]);
    ask.socket.terminate();
  });

  it("is reached through tau-gateway mcp --remote, on the same sessions", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const transport = stdioTransport(["--remote", gw.rpcUrl.replace(/\/rpc$/, "")], { HOME: gw.cwd });
    const client = sdkClient();
    await client.connect(transport);
    transports.push(transport);
    clients.push(client);
    const replied = await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: "Through the relay" } });
    expect(replied.structuredContent).toEqual(expect.objectContaining({ sessionId, text: "You said: Through the relay" }));
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "turn.completed").length === 1, "the Ask client to see the turn");
    ask.socket.terminate();
  });

  it("sends only messages the official schema accepts", () => {
    expect(transports.flatMap((t) => t.problems())).toEqual([]);
    // A cancelled call's answer is never sent.
    const cancelledIds = transports.flatMap((t) => t.fromClient.flatMap((m) => ("method" in m && m.method === "notifications/cancelled" ? [m.params!.requestId] : [])));
    expect(cancelledIds).toHaveLength(1);
    const answered = transports.flatMap((t) => t.fromServer.filter((m) => "id" in m && !("method" in m)).map((m) => (m as { id: unknown }).id));
    const cancelling = transports.find((t) => t.fromClient.some((m) => "method" in m && m.method === "notifications/cancelled"))!;
    expect(cancelling.fromServer.filter((m) => "id" in m && !("method" in m) && m.id === cancelledIds[0])).toEqual([]);
    expect(answered.length).toBeGreaterThan(0);
  });
});
