import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { spawnAcpAgent, type AgentProcess } from "../../support/acp-process.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { Cleanups } from "../../support/cleanups.js";
import { serveCli } from "../../support/cli.js";

/**
 * Points of ACP v1 a client relies on — where the official SDK's own agent sets the behaviour, and
 * the tool call lifecycle — checked with raw messages on `tau-gateway acp` (embedded Tau host) and
 * on WebSocket `/acp`, so nothing in between smooths them over; every message the gateway writes
 * is checked against the official schema.
 */

const cleanups = new Cleanups();
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-acp-conformance-")));
const TOKEN = "tok-acp-conformance-7d1e";
const toolsFile = join(workDir, "tools.json");
writeFileSync(
  toolsFile,
  JSON.stringify({
    tools: [{ name: "echo-args", description: "Prints its JSON arguments.", parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"] }, command: "cat" }],
  }),
);
const tokensFile = join(workDir, "tokens.json");
writeFileSync(tokensFile, JSON.stringify([{ id: "editor", token: TOKEN, tenant: "t" }]));

afterAll(async () => {
  await cleanups.runNewestFirst();
  rmSync(workDir, { recursive: true, force: true });
});

/** Sends one request line and resolves with the gateway's answer to it. */
async function ask(agent: AgentProcess, id: string | number | null, method: string, params?: unknown): Promise<any> {
  const before = agent.sent().length;
  agent.write({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
  return agent.next((m) => m.id === id && !("method" in m) && agent.sent().indexOf(m) >= before);
}

async function endCleanly(agent: AgentProcess): Promise<void> {
  agent.closeInput();
  expect(await agent.exit).toEqual({ code: 0, signal: null });
  expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
}

describe("tau-gateway acp against the SDK agent's behaviour", () => {
  it("answers every request before initialize -32600, an unknown method included; after it, an unknown method is -32601", async () => {
    const agent = spawnAcpAgent([], cleanups);
    expect((await ask(agent, 1, "session/fork", {})).error).toMatchObject({ code: -32600, message: expect.stringContaining("before initialize") });
    expect((await ask(agent, 2, "_vendor/thing", {})).error).toMatchObject({ code: -32600 });
    expect((await ask(agent, 3, "session/list", {})).error).toMatchObject({ code: -32600 });
    expect((await ask(agent, 4, "initialize", { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    expect((await ask(agent, 5, "session/fork", {})).error).toMatchObject({ code: -32601 });
    await endCleanly(agent);
  }, 60_000);

  it("takes a request whose id is null (ids may be null, an integer or a string) and answers it with that id", async () => {
    const agent = spawnAcpAgent([], cleanups);
    expect((await ask(agent, "init", "initialize", { protocolVersion: 1 })).result.protocolVersion).toBe(1);
    // (Once only: the schema check pairs answers with requests by id.)
    expect(await ask(agent, null, "session/list", {})).toEqual({ jsonrpc: "2.0", id: null, result: { sessions: [] } });
    await endCleanly(agent);
  }, 60_000);

  it("asks an editor that resumed a session about a pending call on that call's own card, which then runs to its final status", async () => {
    const { second, asked, prompted } = await callLeftOpenByFirstEditor(1);
    const callId = asked.params.toolCall.toolCallId;
    expect((await prompted).result).toEqual({ stopReason: "end_turn" });
    await second.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "usage_update");
    const updates = second.received.filter((m) => m.method === "session/update").map((m) => m.params.update);
    const cards = updates.filter((u) => u.sessionUpdate === "tool_call");
    expect(cards).toEqual([expect.objectContaining({ toolCallId: callId, name: "echo-args", kind: "execute", status: "pending", rawInput: { a: 1 } })]);
    // The request names the call as its card does, for a client that shows it on its own.
    expect(second.received.find((m) => m.method === "session/request_permission").params.toolCall).toEqual({ toolCallId: callId, title: cards[0].title, kind: "execute", status: "pending", rawInput: { a: 1 } });
    expect(updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => [u.toolCallId, u.status])).toEqual([
      [callId, "in_progress"],
      [callId, "completed"],
    ]);
    expect(agentMessageProblems(second.received, second.sent)).toEqual([]);
  }, 60_000);

  it("tells an editor that a permission request another editor answered is no longer needed ($/cancel_request), and takes its -32800 answer", async () => {
    const { first, second, sessionId, asked, prompted } = await callLeftOpenByFirstEditor(2);
    const cancelled = await first.next((m) => m.method === "$/cancel_request");
    expect(cancelled).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: asked.id } });
    // The editor still answers the request (protocol §1), as cancelled; the turn is unaffected.
    first.send({ jsonrpc: "2.0", id: asked.id, error: { code: -32800, message: "Request cancelled" } });
    expect((await prompted).result).toEqual({ stopReason: "end_turn" });
    // Only the request that was left open is cancelled: none to the editor that answered.
    expect(second.received.filter((m) => m.method === "$/cancel_request")).toEqual([]);
    expect((await first.request("session/list", {})).result.sessions).toEqual([expect.objectContaining({ sessionId })]);
    expect(agentMessageProblems(first.received, first.sent)).toEqual([]);
    expect(agentMessageProblems(second.received, second.sent)).toEqual([]);
  }, 60_000);

  it("sends $/cancel_request for a permission request left open when its turn is cancelled", async () => {
    // Neither editor answers: only the cancelled turn settles the request.
    const { first, second, sessionId, asked, prompted } = await callLeftOpenByFirstEditor(3, { secondAnswers: false });
    first.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    expect((await prompted).result).toEqual({ stopReason: "cancelled" });
    expect(await first.next((m) => m.method === "$/cancel_request")).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: asked.id } });
    const secondAsked = second.received.find((m) => m.method === "session/request_permission");
    expect(await second.next((m) => m.method === "$/cancel_request")).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: secondAsked.id } });
    expect(agentMessageProblems(first.received, first.sent)).toEqual([]);
    expect(agentMessageProblems(second.received, second.sent)).toEqual([]);
  }, 60_000);
});

/**
 * Two editors of one session on WebSocket `/acp` of a real `serve`: the first prompts a call of
 * the `echo-args` command tool with `{"a": a}` and leaves its permission request unanswered; the
 * second resumes the session and allows the call (RawAcpClient's default answer) unless
 * `secondAnswers` is false. Resolves once both have been asked.
 */
async function callLeftOpenByFirstEditor(a: number, { secondAnswers = true } = {}) {
  const gateway = await serveCli(["--port", "0", "--tokens-file", tokensFile, "--tools-config", toolsFile, "--log-level", "warn"], cleanups);
  const url = `${gateway.baseUrl.replace("http://", "ws://")}/acp`;
  const first = await RawAcpClient.connect(url, { authorization: `Bearer ${TOKEN}` });
  const second = await RawAcpClient.connect(url, { authorization: `Bearer ${TOKEN}` });
  cleanups.push(() => first.close());
  cleanups.push(() => second.close());
  first.answer = () => undefined;
  if (!secondAnswers) second.answer = () => undefined;
  await first.initialize();
  await second.initialize();
  const { sessionId } = (await first.request("session/new", { cwd: workDir, mcpServers: [] })).result;
  const prompted = first.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `/tool echo-args {"a":${a}}` }] });
  const asked = await first.next((m) => m.method === "session/request_permission");
  await second.request("session/resume", { sessionId, cwd: workDir });
  await second.next((m) => m.method === "session/request_permission");
  return { first, second, sessionId, asked, prompted };
}
