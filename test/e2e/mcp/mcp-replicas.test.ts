import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { CALL_MARK, markRuns, markToolsFile } from "../../support/mark-tool.js";
import { httpTransport, sdkClient, type RecordingTransport } from "../../support/mcp-client.js";
import { leasesOwned, startReplicaSet } from "../../support/replica-set.js";

/**
 * MCP on gateway replicas sharing a Redis store, every part a real process: a session an MCP
 * client started through replica A is listed and driven by an Ask client on replica B, one the Ask
 * client started is continued by an MCP client on B, and an approval of a turn the Ask client sent
 * through B is answered by the MCP client's form on A: the command runs once.
 */

const cleanups = cleanupsAfterEach();

async function mcpOn(replica: ServingCli, answer?: (request: ElicitRequest) => void): Promise<{ client: Client; transport: RecordingTransport }> {
  const transport = httpTransport(`${replica.baseUrl}/mcp`);
  const client = sdkClient({ elicitation: answer !== undefined });
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      answer(request);
      return { action: "accept", content: { decision: "approve" } };
    });
  }
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

describe("MCP on replicas sharing Redis", () => {
  it("shares sessions both ways across replicas, and a form on one replica decides an approval of a turn sent through another", { timeout: 240_000 }, async () => {
    const { file, marker } = markToolsFile(cleanups);
    const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tools-config", file] });
    const [a, b] = set.replicas as [ServingCli, ServingCli];
    expect([await leasesOwned(a), await leasesOwned(b)]).toEqual([1, 0]);

    const asked: ElicitRequest[] = [];
    const onA = await mcpOn(a, (request) => void asked.push(request));
    const started = await onA.client.callTool({ name: "tau", arguments: { prompt: "Started on A" } });
    const { sessionId } = started.structuredContent as { sessionId: string };

    // Replica B's Ask client lists it and sends a turn whose command needs approval; the MCP client on A is asked.
    const ask = await set.client(b);
    await ask.request("initialize", { client: { name: "replicas", version: "1" } });
    const { sessions } = await ask.request("session/list", {});
    expect(sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(sessionId);
    await ask.request("session/subscribe", { sessionId });
    const { turnId } = await ask.request("session/send", { sessionId, content: CALL_MARK });
    await waitForTerminal(ask, sessionId, turnId);
    expect(asked).toHaveLength(1);
    expect(payloadsOf(ask.eventsOf(sessionId), "approval.updated")).toEqual([expect.objectContaining({ status: "approved" })]);
    expect(markRuns(marker)).toBe(1);

    // A session the Ask client started through B is continued by an MCP client on B.
    const { session } = await ask.request("session/create", {});
    const onB = await mcpOn(b);
    const listed = (await onB.client.callTool({ name: "tau-sessions", arguments: {} })).structuredContent as { sessions: Array<{ sessionId: string }> };
    expect(listed.sessions.map((s) => s.sessionId)).toEqual(expect.arrayContaining([sessionId, session.sessionId]));
    const replied = await onB.client.callTool({ name: "tau-reply", arguments: { sessionId: session.sessionId, prompt: "Continued on B" } });
    expect(replied.structuredContent).toEqual(expect.objectContaining({ status: "completed", text: "You said: Continued on B" }));
    expect([...onA.transport.problems(), ...onB.transport.problems()]).toEqual([]);
  });

  it("answers a Streamable HTTP session's id on another replica with 404 saying why, and the client starts again there", { timeout: 240_000 }, async () => {
    const set = await startReplicaSet(cleanups, { replicas: 2 });
    const [a, b] = set.replicas as [ServingCli, ServingCli];
    const onA = await mcpOn(a);
    const started = await onA.client.callTool({ name: "tau", arguments: { prompt: "Started on A" } });
    const { sessionId } = started.structuredContent as { sessionId: string };
    const mcpSession = onA.transport.sessionId!;

    const post = (replica: ServingCli, id: string) =>
      fetch(`${replica.baseUrl}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    const onB = await post(b, mcpSession);
    expect(onB.status).toBe(404);
    const refused = (await onB.json()) as { error: { code: number; message: string } };
    expect(refused.error.code).toBe(-32001);
    expect(refused.error.message).toMatch(/^Session not found on this gateway replica: the replica that started it serves it/);
    expect(refused.error.message).toContain("initialize");
    // An id no replica serves is just unknown.
    expect(((await (await post(b, "f00d")).json()) as { error: { message: string } }).error.message).toBe("Session not found: start a new one with initialize");
    // On A it is served as ever.
    expect((await onA.client.listTools()).tools.length).toBeGreaterThan(0);

    // The client starts again on B, and continues the Tau session there.
    const again = await mcpOn(b);
    const replied = await again.client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: "Continued on B" } });
    expect(replied.structuredContent).toEqual(expect.objectContaining({ status: "completed", text: "You said: Continued on B" }));

    // Once A's session ended (DELETE), B no longer says another replica serves it.
    await (onA.transport.inner as StreamableHTTPClientTransport).terminateSession();
    await expect.poll(async () => ((await (await post(b, mcpSession)).json()) as { error: { message: string } }).error.message).toBe("Session not found: start a new one with initialize");
    expect([...onA.transport.problems(), ...again.transport.problems()]).toEqual([]);
  });
});
