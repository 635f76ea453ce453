import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { Cleanups } from "../../support/cleanups.js";
import { serveCli, type ServingCli } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { tryUpgrade } from "../../support/secure-gateway.js";

/**
 * ACP over WebSocket `/acp` on `tau-gateway serve`, as one real process: the official SDK client
 * through the SDK's WebSocket transport, raw frames for bad input, two tenants, metrics, and a
 * client that vanishes mid-turn. Every message the gateway sends to the raw clients is checked
 * against the official schema.
 */

const ALICE = "tok-alice-acp-51c2";
const BOB = "tok-bob-acp-9e07";
/** An operator's token: with several tenants, /metrics answers only such tokens. */
const OPERATOR = "tok-operator-5e1f";
const cleanups = new Cleanups();
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-acp-ws-")));
let gateway: ServingCli;
const raws: RawAcpClient[] = [];

beforeAll(async () => {
  const tokensFile = join(workDir, "tokens.json");
  writeFileSync(
    tokensFile,
    JSON.stringify([
      { id: "alice", token: ALICE, tenant: "tenant-a" },
      { id: "bob", token: BOB, tenant: "tenant-b" },
      { id: "operator", token: OPERATOR, tenant: "operations", operator: true },
    ]),
  );
  gateway = await serveCli(["--port", "0", "--tokens-file", tokensFile, "--drain-timeout", "500", "--log-level", "warn"], cleanups);
}, 60_000);

afterAll(async () => {
  for (const raw of raws) await raw.close();
  await cleanups.runNewestFirst();
  rmSync(workDir, { recursive: true, force: true });
});

const acpUrl = () => `${gateway.baseUrl.replace("http://", "ws://")}/acp`;

async function raw(token: string): Promise<RawAcpClient> {
  const client = await RawAcpClient.connect(acpUrl(), { authorization: `Bearer ${token}` });
  raws.push(client);
  return client;
}

describe("WebSocket /acp", () => {
  it("refuses an upgrade without a valid token, like every route", async () => {
    const outcome = await tryUpgrade(acpUrl());
    expect(outcome.opened).toBe(false);
    if (!outcome.opened) expect(outcome.status).toBe(401);
  });

  it("serves the official SDK client through the SDK's WebSocket transport", async () => {
    const stream = createWebSocketStream(acpUrl(), { WebSocket: WebSocket as never, headers: { authorization: `Bearer ${ALICE}` } });
    const text = await acp.client({ name: "tau-gateway-tests" }).connectWith(stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
      const session = await ctx.buildSession(workDir).start();
      void session.prompt("Hello over WebSocket");
      return session.readText();
    });
    expect(text).toBe("You said: Hello over WebSocket");
  }, 60_000);

  it("answers bad input with JSON-RPC errors, and nothing invalid reaches Tau", async () => {
    const client = await raw(ALICE);
    const errorWith = (id: unknown) => (m: any) => "error" in m && m.id === id;
    client.send("{not json");
    expect((await client.next(errorWith(null))).error.code).toBe(-32700);
    client.received.length = 0;
    client.send([{ jsonrpc: "2.0", id: "batched", method: "initialize", params: { protocolVersion: 1 } }]);
    expect((await client.next(errorWith(null))).error.code).toBe(-32600);
    client.send({ id: "no-jsonrpc", method: "initialize", params: { protocolVersion: 1 } });
    expect((await client.next(errorWith("no-jsonrpc"))).error).toMatchObject({ code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0"' });
    expect((await client.request("session/new", { cwd: workDir, mcpServers: [] })).error).toMatchObject({ code: -32600, message: "Invalid Request: session/new before initialize" });
    expect((await client.initialize()).result.protocolVersion).toBe(1);
    expect((await client.request("session/fork", {})).error.code).toBe(-32601);
    expect((await client.request("session/new", { cwd: workDir })).error).toMatchObject({ code: -32602, message: expect.stringContaining("mcpServers") });
    expect((await client.request("session/new", { cwd: 7, mcpServers: [] })).error).toMatchObject({ code: -32602, message: expect.stringContaining("cwd") });
    const created = (await client.request("session/new", { cwd: workDir, mcpServers: [] })).result;
    const prompt = await client.request("session/prompt", { sessionId: created.sessionId, prompt: [{ type: "image", data: "aGk=", mimeType: "image/png" }] });
    expect(prompt.error).toMatchObject({ code: -32602, message: expect.stringContaining("prompt.0.type") });
    // An unknown notification is ignored; the connection carries on.
    client.send({ jsonrpc: "2.0", method: "_unknown/notice", params: {} });
    expect((await client.request("session/list", {})).result.sessions.map((s: any) => s.sessionId)).toContain(created.sessionId);
    expect(agentMessageProblems(client.received, client.sent)).toEqual([]);
  }, 60_000);

  it("keeps tenants apart: another tenant's session is answered exactly as a missing one", async () => {
    const alice = await raw(ALICE);
    await alice.initialize();
    const { sessionId } = (await alice.request("session/new", { cwd: workDir, mcpServers: [] })).result;
    const bob = await raw(BOB);
    await bob.initialize();
    const missing = await bob.request("session/load", { sessionId: "no-such-session", cwd: workDir, mcpServers: [] });
    const foreign = await bob.request("session/load", { sessionId, cwd: workDir, mcpServers: [] });
    expect(foreign.error).toEqual({ ...missing.error, data: { sessionId } });
    expect(missing.error).toMatchObject({ code: -32002, message: "Resource not found" });
    const prompted = await bob.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(prompted.error).toEqual(foreign.error);
    expect((await bob.request("session/list", {})).result.sessions).toEqual([]);
    expect(agentMessageProblems(bob.received, bob.sent)).toEqual([]);
  }, 60_000);

  it("keeps the turn of a client that vanished running past the drain timeout, for the tenant's other connections to see through or stop", async () => {
    const first = await raw(ALICE);
    await first.initialize();
    const { sessionId } = (await first.request("session/new", { cwd: workDir, mcpServers: [] })).result;
    first.send({ jsonrpc: "2.0", id: 99, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/bash echo started\n/sleep 60000" }] } });
    await first.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "tool_call_update");
    first.socket.terminate();
    // Another connection of the tenant loads the session: the orphaned turn is still running there
    // (the drain timeout, 500 ms, bounds only a stopping gateway). A prompt steers into it and is
    // answered `cancelled` once that connection's session/cancel has stopped it; then a prompt runs.
    const second = await raw(ALICE);
    await second.initialize();
    expect((await second.request("session/load", { sessionId, cwd: workDir, mcpServers: [] })).error).toBeUndefined();
    const steered = second.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "steer words" }] });
    second.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    expect((await steered).result).toEqual({ stopReason: "cancelled" });
    const later = await second.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "after the interrupt" }] });
    expect(later.result).toEqual({ stopReason: "end_turn" });
    expect(agentMessageProblems(second.received, second.sent)).toEqual([]);
  }, 60_000);

  it("counts ACP requests in the metrics", async () => {
    const response = await fetch(`${gateway.baseUrl}/metrics`, { headers: { authorization: `Bearer ${OPERATOR}` } });
    const text = await response.text();
    expect(text).toMatch(/tau_gateway_requests_total\{dialect="acp",method="session\/prompt",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/tau_gateway_requests_total\{dialect="acp",method="session\/load",outcome="resource_not_found"\} [1-9]/);
    expect(text).toMatch(/tau_gateway_connections_total\{route="\/acp"\} [1-9]/);
    expect(text).toMatch(/tau_gateway_validation_failures_total\{dialect="acp",source="client"\} [1-9]/);
  });

  it("tells the session's editors of a mode changed by another client of it: a Codex client's approval policy, or another editor's set_mode", async () => {
    const editor = await raw(ALICE);
    await editor.initialize();
    const created = await editor.request("session/new", { cwd: workDir, mcpServers: [] });
    const sessionId = created.result.sessionId as string;
    expect(created.result.modes.currentModeId).toBe("on_request");
    const modeUpdates = () => editor.received.filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === "current_mode_update").map((m) => m.params.update.currentModeId);

    const codex = await CodexTestClient.websocket(gateway.baseUrl.replace("http://", "ws://"), { authorization: `Bearer ${ALICE}` });
    try {
      await codex.initialize();
      await codex.request("thread/resume", { threadId: sessionId });
      // The same mode again changes nothing; "never" runs tools without asking, which editors show as auto.
      await codex.request("thread/resume", { threadId: sessionId, approvalPolicy: "on-request" });
      await codex.request("thread/resume", { threadId: sessionId, approvalPolicy: "never" });
      await editor.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "current_mode_update");
      expect(modeUpdates()).toEqual(["auto"]);

      const other = await raw(ALICE);
      await other.initialize();
      expect((await other.request("session/load", { sessionId, cwd: workDir, mcpServers: [] })).result.modes.currentModeId).toBe("auto");
      expect(await other.request("session/set_mode", { sessionId, modeId: "plan" })).toMatchObject({ result: {} });
      await other.next((m) => m.method === "session/update" && m.params.update.currentModeId === "plan");
      await editor.next((m) => m.method === "session/update" && m.params.update.currentModeId === "plan");
      expect(modeUpdates()).toEqual(["auto", "plan"]);
      expect(agentMessageProblems(editor.received, editor.sent)).toEqual([]);
      expect(codex.invalid).toEqual([]);
    } finally {
      codex.socket.terminate();
    }
  }, 60_000);
});
