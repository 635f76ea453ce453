import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, openSession, payloadsOf } from "../../support/ask-events.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { httpTransport, sdkClient, type RecordingTransport } from "../../support/mcp-client.js";
import { codexOnSession, editorOnSession } from "../../support/session-joiners.js";

/**
 * Sessions shared between MCP and the other dialects on one gateway: a session an MCP client
 * started is listed and opened by Ask, Codex and ACP clients, sessions they started are listed,
 * read and continued by the MCP client; and the MCP client is told its resource list changed when
 * another dialect's client starts a session of its tenant or closes one.
 */

let gw: TestGateway;
const transports: RecordingTransport[] = [];
const clients: Client[] = [];
const closers: Array<() => void> = [];

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const close of closers) close();
  await gw?.stop();
});

async function mcp(): Promise<{ client: Client; listChanges: () => number }> {
  const transport = httpTransport(`${gw.rpcUrl.replace(/^ws:/, "http:").replace(/\/rpc$/, "")}/mcp`);
  const client = sdkClient();
  let changes = 0;
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changes++);
  await client.connect(transport);
  transports.push(transport);
  clients.push(client);
  return { client, listChanges: () => changes };
}

const sessionIds = (listed: unknown) => (listed as { sessions: Array<{ sessionId: string }> }).sessions.map((s) => s.sessionId);

describe("MCP sessions shared with the other dialects", () => {
  it("announces a changed resource list when an Ask client starts a session and when it closes one", async () => {
    const { client, listChanges } = await mcp();
    const ask = await gw.client();
    closers.push(() => ask.socket.terminate());
    const sessionId = await openSession(ask);
    await eventually(() => listChanges() === 1, "the MCP client to hear of the new session");
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain(`tau://session/${sessionId}`);

    await ask.request("session/close", { sessionId });
    await eventually(() => listChanges() === 2, "the MCP client to hear the session closed");
    expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain(`tau://session/${sessionId}`);
  });

  it("lets Ask, Codex and ACP clients list and open a session an MCP client started", async () => {
    const { client } = await mcp();
    const started = await client.callTool({ name: "tau", arguments: { prompt: "Started over MCP", cwd: gw.cwd } });
    const { sessionId } = started.structuredContent as { sessionId: string };

    const ask = await gw.client();
    closers.push(() => ask.socket.terminate());
    await ask.request("initialize", { client: { name: "e2e", version: "1" } });
    expect(sessionIds(await ask.request("session/list", {}))).toContain(sessionId);

    const codex = await codexOnSession(gw, sessionId);
    closers.push(() => codex.socket.terminate());
    const threads = (await codex.request("thread/list", { limit: 100 })) as { data: Array<{ id: string }> };
    expect(threads.data.map((t) => t.id)).toContain(sessionId);
    const read = (await codex.request("thread/read", { threadId: sessionId, includeTurns: true })) as { thread: { turns: Array<{ items: Array<{ type: string; text?: string }> }> } };
    expect(read.thread.turns.flatMap((t) => t.items).filter((i) => i.type === "agentMessage").map((i) => i.text)).toEqual(["You said: Started over MCP"]);

    const editor = await editorOnSession(gw, sessionId);
    closers.push(() => editor.close());
    expect(sessionIds((await editor.request("session/list", {})).result)).toContain(sessionId);

    // The Ask client continues it; the MCP client reads both turns.
    await ask.request("session/subscribe", { sessionId });
    await ask.request("session/send", { sessionId, content: "And from Ask" });
    await eventually(() => payloadsOf(ask.eventsOf(sessionId), "turn.completed").length === 1, "the Ask turn to end");
    const history = await client.callTool({ name: "tau-history", arguments: { sessionId } });
    expect((history.structuredContent as { messages: Array<{ text: string }> }).messages.map((m) => m.text)).toEqual([
      "Started over MCP",
      "You said: Started over MCP",
      "And from Ask",
      "You said: And from Ask",
    ]);
  });

  it("lets the MCP client list, read and continue sessions Codex and ACP clients started", async () => {
    const { client } = await mcp();
    const codex = await gw.codexClient();
    closers.push(() => codex.socket.terminate());
    await codex.initialize();
    const { thread } = (await codex.request("thread/start", { cwd: gw.cwd })) as { thread: { id: string } };
    const editor = await RawAcpClient.connect(gw.acpUrl);
    closers.push(() => editor.close());
    await editor.initialize();
    const { sessionId: acpSession } = (await editor.request("session/new", { cwd: gw.cwd, mcpServers: [] })).result as { sessionId: string };

    const listed = sessionIds((await client.callTool({ name: "tau-sessions", arguments: {} })).structuredContent);
    expect(listed).toEqual(expect.arrayContaining([thread.id, acpSession]));
    for (const sessionId of [thread.id, acpSession]) {
      const replied = await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: `Hello ${sessionId}` } });
      expect(replied.structuredContent).toEqual(expect.objectContaining({ sessionId, status: "completed", text: `You said: Hello ${sessionId}` }));
      const resource = await client.readResource({ uri: `tau://session/${sessionId}` });
      expect(resource.contents[0]).toEqual(expect.objectContaining({ uri: `tau://session/${sessionId}`, text: expect.stringContaining(`You said: Hello ${sessionId}`) }));
    }
  });

  it("sends only messages the official schema accepts", () => {
    expect(transports.flatMap((t) => t.problems())).toEqual([]);
  });
});
