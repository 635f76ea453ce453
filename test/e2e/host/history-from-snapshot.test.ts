import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { BridgeStack } from "../../../src/cli/bridge-stack.js";
import { buildGateway } from "../../../src/gateway/app.js";
import { startTauHost, type RunningTauHost } from "../../../src/host/index.js";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, waitForTerminal } from "../../support/ask-events.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { TauTestClient } from "../../support/tau-client.js";
import { askGatewayDialect } from "../../../src/cli/dialects/ask/gateway.js";

/**
 * Turns the gateway did not watch — a session worked only through `/tau`, or before the gateway
 * restarted with its log in memory — are history like any other in every dialect: Ask's replay,
 * Codex's thread turns and ACP's session/load replay are rebuilt from Tau's snapshot.
 */

const FIRST = "/think pondering\n/bash echo hi\nHello";
const SECOND = "Second";

/** What an Ask replay of a session with the FIRST and SECOND turns holds, in order, after session.created. */
const TWO_TURNS = [
  "turn.started",
  "user.message",
  "model.thinking",
  "tool.use",
  "tool.result",
  "model.streaming",
  "turn.completed",
  "turn.started",
  "user.message",
  "model.streaming",
  "turn.completed",
];

const payloads = (events: readonly Event[], type: Event["type"]) => events.filter((e) => e.type === type).map((e) => e.payload as Record<string, unknown>);

/** Replays the session's log to a new Ask client and checks it tells both turns. */
async function expectAskHistory(ask: AskTestClient, sessionId: string, turnIds: [string, string]): Promise<void> {
  await ask.request("initialize", { client: { name: "phone", version: "1" } });
  await ask.request("session/subscribe", { sessionId });
  await waitForTerminal(ask, sessionId, turnIds[1]);
  const events = ask.eventsOf(sessionId);
  expect(events.map((e) => e.type)).toEqual(["session.created", ...TWO_TURNS]);
  expectContiguous(events);
  expectOneTerminalPerTurn(events);
  expect(payloads(events, "user.message")).toEqual([
    { messageId: turnIds[0], turnId: turnIds[0], text: FIRST },
    { messageId: turnIds[1], turnId: turnIds[1], text: SECOND },
  ]);
  expect(payloads(events, "model.thinking")).toEqual([{ delta: "pondering", messageId: expect.any(String) }]);
  expect(payloads(events, "tool.use")).toEqual([expect.objectContaining({ name: "bash", args: { command: "echo hi" } })]);
  expect(payloads(events, "tool.result")).toEqual([expect.objectContaining({ name: "bash", output: "hi\n", isError: false })]);
  expect(payloads(events, "turn.completed")).toEqual([
    expect.objectContaining({ turnId: turnIds[0], response: "You said: Hello\nTool bash returned: hi" }),
    expect.objectContaining({ turnId: turnIds[1], response: "You said: Second" }),
  ]);
  expect(ask.invalid).toEqual([]);
}

describe("a session worked only through /tau", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.stop());

  it("has its turns in Ask's replay, Codex's thread/resume and thread/read, and ACP's session/load", async () => {
    const tau = await TauTestClient.connect(gw.rpcUrl.replace(/\/rpc$/, "/tau"));
    await tau.initialize();
    const sessionId = await tau.createSession(gw.cwd);
    await tau.call("session.submit", { sessionId, text: FIRST, historyEntryId: "turn-one" });
    await tau.call("session.submit", { sessionId, text: SECOND, historyEntryId: "turn-two" });

    const ask = await gw.client();
    await expectAskHistory(ask, sessionId, ["turn-one", "turn-two"]);

    const codex = await gw.codexClient();
    await codex.initialize();
    const resumed = await codex.request("thread/resume", { threadId: sessionId });
    const read = await codex.request("thread/read", { threadId: sessionId, includeTurns: true });
    for (const { thread } of [resumed, read]) {
      expect(thread.turns.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([
        ["turn-one", "completed"],
        ["turn-two", "completed"],
      ]);
      expect(thread.turns[0].items.map((i: { type: string }) => i.type)).toEqual(["userMessage", "reasoning", "commandExecution", "agentMessage"]);
      expect(thread.turns[0].items[0].content).toEqual([{ type: "text", text: FIRST, text_elements: [] }]);
      expect(thread.turns[0].items[2]).toMatchObject({ command: "echo hi", status: "completed", aggregatedOutput: "hi\n" });
      expect(thread.turns[1].items.at(-1)).toMatchObject({ type: "agentMessage", text: "You said: Second" });
    }
    expect(codex.invalid).toEqual([]);

    const acp = await RawAcpClient.connect(gw.acpUrl);
    await acp.initialize();
    expect((await acp.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();
    const updates = acp.received.filter((m) => m.method === "session/update").map((m) => m.params.update);
    expect(updates.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => [u.messageId, u.content.text])).toEqual([
      ["turn-one", FIRST],
      ["turn-two", SECOND],
    ]);
    expect(updates.filter((u) => u.sessionUpdate === "tool_call")).toEqual([
      expect.objectContaining({ name: "bash", status: "completed", rawOutput: { output: "hi\n", isError: false } }),
    ]);
    expect(agentMessageProblems(acp.received, acp.sent)).toEqual([]);

    await acp.close();
    codex.socket.terminate();
    ask.socket.terminate();
    await tau.close();
  });
});

/** A gateway (bridge stack and routes, memory store) in front of `hostUrl`, as `serve --upstream` runs. */
async function gatewayOn(hostUrl: string, cwd: string): Promise<{ rpcUrl: string; stop(): Promise<void> }> {
  const stack = new BridgeStack();
  let app: FastifyInstance | undefined;
  const stop = async () => {
    await app?.close();
    await stack.close();
  };
  await stack.start({ upstream: hostUrl, defaultCwd: cwd, eventRetention: 10_000, interactionTimeoutMs: 300_000 }, [], () => undefined);
  app = buildGateway({ tauUpstream: { url: hostUrl }, upstream: stack.upstream!, dialects: [askGatewayDialect(stack.ask!, { jsonrpc: { jsonrpcMember: "include" } })] });
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  return { rpcUrl: `${address.replace("http://", "ws://")}/rpc`, stop };
}

describe("a gateway restarted with its log in memory", () => {
  let host: RunningTauHost;
  let cwd: string;
  beforeAll(async () => {
    cwd = realpathSync(mkdtempSync(join(tmpdir(), "history-restart-")));
    host = await startTauHost({ port: 0 });
  });
  afterAll(async () => {
    await host?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it("replays to Ask the turns the gateway ran before it restarted", async () => {
    const before = await gatewayOn(host.url, cwd);
    const ask = await AskTestClient.websocket(before.rpcUrl);
    await ask.request("initialize", { client: { name: "laptop", version: "1" } });
    const { session } = await ask.request("session/create", {});
    const sessionId: string = session.sessionId;
    await ask.request("session/subscribe", { sessionId });
    const first = await ask.request("session/send", { sessionId, content: FIRST });
    await waitForTerminal(ask, sessionId, first.turnId);
    const second = await ask.request("session/send", { sessionId, content: SECOND });
    await waitForTerminal(ask, sessionId, second.turnId);
    ask.socket.terminate();
    await before.stop();

    const after = await gatewayOn(host.url, cwd);
    try {
      const phone = await AskTestClient.websocket(after.rpcUrl);
      await expectAskHistory(phone, sessionId, [first.turnId, second.turnId]);
      phone.socket.terminate();
    } finally {
      await after.stop();
    }
  });
});
