import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema, type LoggingMessageNotification, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, openSession, payloadsOf } from "../../support/ask-events.js";
import { CALL_ECHO, ECHO_TOOL } from "../../support/echo-tool.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { relistingClient, toolListChanges, webSocketTransport, type RecordingTransport } from "../../support/mcp-client.js";

/**
 * What the gateway tells an MCP client unasked: its tool list changing (tau-answer is offered
 * while a session the client works with waits for a decision, and the SDK client lists the tools
 * again when told), and log messages (notifications/message) about its sessions and the Tau host,
 * from the level logging/setLevel chose. Every message is checked against the official schema.
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

const names = (tools: Tool[]) => tools.map((t) => t.name);
const ALWAYS = ["tau", "tau-reply", "tau-sessions", "tau-history", "tau-interrupt"];

/** An SDK client on the MCP WebSocket that lists its tools again when told they changed, and keeps its log messages. */
async function mcpClient(): Promise<{ client: Client; relisted: string[][]; logs: LoggingMessageNotification["params"][]; transport: RecordingTransport }> {
  const logs: LoggingMessageNotification["params"][] = [];
  const transport = webSocketTransport(gw.rpcUrl.replace(/\/rpc$/, "/mcp/ws"));
  const { client, relisted } = relistingClient();
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
  await client.connect(transport);
  transports.push(transport);
  clients.push(client);
  return { client, relisted, logs, transport };
}

const toolChanges = toolListChanges;

describe("the tool list", () => {
  it("offers tau-answer while a session the client works with waits for a decision, and says so each time", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { client, relisted, transport } = await mcpClient();
    const bystander = await mcpClient();
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect(names((await client.listTools()).tools)).toEqual(ALWAYS);

    const call = client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: CALL_ECHO } });
    await eventually(() => relisted.length === 1, "the client to list its tools again");
    expect(relisted[0]).toEqual([...ALWAYS, "tau-answer"]);
    const answered = await client.callTool({ name: "tau-answer", arguments: { sessionId, action: "approve" } });
    expect(answered.structuredContent).toEqual(expect.objectContaining({ sessionId, kind: "approval", action: "approve" }));
    await eventually(() => relisted.length === 2, "the client to list its tools again");
    expect(relisted[1]).toEqual(ALWAYS);
    expect((await call).structuredContent).toEqual(expect.objectContaining({ status: "completed" }));
    expect(toolChanges(transport)).toBe(2);

    // A client that works with no session of it was told nothing; its list is the same.
    expect(toolChanges(bystander.transport)).toBe(0);
    expect(names((await bystander.client.listTools()).tools)).toEqual(ALWAYS);
    ask.socket.terminate();
  });

  it("offers tau-answer at once to a client that comes to a session already waiting", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const first = await mcpClient();
    const call = first.client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: CALL_ECHO } });
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "approval.required").length === 1, "the approval to be asked for");

    const late = await mcpClient();
    await late.client.subscribeResource({ uri: `tau://session/${sessionId}` });
    await eventually(() => late.relisted.length === 1, "the late client to list its tools again");
    expect(late.relisted[0]).toEqual([...ALWAYS, "tau-answer"]);
    await ask.request("interaction/approve", { sessionId, interactionId: "act_1" });
    await eventually(() => late.relisted.length === 2 && first.relisted.length === 2, "both clients to list their tools again");
    expect([late.relisted[1], first.relisted[1]]).toEqual([ALWAYS, ALWAYS]);
    await call;
    ask.socket.terminate();
  });
});

describe("log messages", () => {
  it("tells a client of its session's failed turn from the level it set, and nothing before it sets one", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const warned = await mcpClient();
    const quiet = await mcpClient();
    const unset = await mcpClient();
    await warned.client.setLoggingLevel("warning");
    await quiet.client.setLoggingLevel("critical");

    // Each works with the session (subscribed to it), so each would hear of it at its level.
    for (const { client } of [warned, quiet, unset]) await client.subscribeResource({ uri: `tau://session/${sessionId}` });
    const failed = await warned.client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: "/fail the model broke" } });
    expect(failed.structuredContent).toEqual(expect.objectContaining({ status: "failed" }));
    await eventually(() => warned.logs.length > 0, "the log message");
    expect(warned.logs).toEqual([
      { level: "error", logger: "tau-session", data: expect.objectContaining({ sessionId, event: "turn.failed", message: expect.stringContaining("the model broke") }) },
    ]);

    // An interrupted turn is a notice: below warning, so not sent to it either.
    await warned.client.setLoggingLevel("notice");
    const running = warned.client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: "/sleep 30000" } });
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "turn.started").length === 2, "the second turn to start");
    await warned.client.callTool({ name: "tau-interrupt", arguments: { sessionId } });
    expect((await running).structuredContent).toEqual(expect.objectContaining({ status: "aborted" }));
    await eventually(() => warned.logs.length === 2, "the notice");
    expect(warned.logs[1]).toEqual({ level: "notice", logger: "tau-session", data: expect.objectContaining({ sessionId, event: "turn.aborted" }) });
    expect(quiet.logs).toEqual([]);
    expect(unset.logs).toEqual([]);
    ask.socket.terminate();
  });

  it("tells every client that asked when the Tau host is lost and when it is back", async () => {
    const { client, logs } = await mcpClient();
    await client.setLoggingLevel("info");
    await gw.stopHost();
    await eventually(() => logs.length === 1, "the host loss to be told");
    expect(logs[0]).toEqual({ level: "error", logger: "tau-gateway", data: expect.objectContaining({ message: expect.stringContaining("lost its connection to a Tau host") }) });
    await gw.startHost();
    await eventually(() => logs.length === 2, "the host's return to be told");
    expect(logs[1]).toEqual({ level: "notice", logger: "tau-gateway", data: expect.objectContaining({ message: expect.stringContaining("connected to the Tau host again") }) });
    // The tools work again.
    expect((await client.callTool({ name: "tau-sessions", arguments: {} })).isError).toBeFalsy();
  });

  it("sends only messages the official schema accepts", () => {
    expect(transports.flatMap((t) => t.problems())).toEqual([]);
  });
});
