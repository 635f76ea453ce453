import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { spawnTauHost } from "../../support/acp-process.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { serveCli } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { startCountingRelay } from "../../support/counting-relay.js";
import { spawnStdio } from "../../support/stdio-child.js";

/**
 * A turn still running at the drain deadline: the gateway interrupts it upstream and every client
 * attached hears how it ended, in its own dialect, before its connection closes — Ask
 * `turn.aborted`, Codex `turn/completed` with status `interrupted`, the ACP prompt answered
 * `cancelled` — and the process exits 0.
 */

const cleanups = cleanupsAfterEach();
const workDir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-drain-deadline-")));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** A turn that is busy for a minute once it has visibly started (the bash step). */
const LONG_TURN = "/bash echo started\n/sleep 60000\nnever gets here";

/** Resolves, at the close, with how many messages had arrived before it. */
function receivedAtClose(socket: WebSocket, received: () => unknown[]): Promise<{ code: number; before: unknown[] }> {
  return new Promise((resolve) => socket.once("close", (code) => resolve({ code, before: [...received()] })));
}

/**
 * An Ask client (WebSocket /rpc, subscribed), a Codex client (WebSocket /) and an ACP client
 * (WebSocket /acp), each with a long turn of its own, once every turn has visibly started.
 */
async function clientsMidTurn(baseUrl: string) {
  const wsBase = baseUrl.replace("http://", "ws://");
  const ask = await AskTestClient.websocket(`${wsBase}/rpc`);
  cleanups.push(() => ask.socket.terminate());
  const askSession = (await ask.request("session/create", { workspace: { workspacePath: workDir } })).session.sessionId as string;
  const askClosed = receivedAtClose(ask.socket, () => ask.eventsOf(askSession));
  await ask.request("session/subscribe", { sessionId: askSession });
  const askTurn = (await ask.request("session/send", { sessionId: askSession, content: LONG_TURN })).turnId as string;

  const codex = await CodexTestClient.websocket(`${wsBase}/`);
  cleanups.push(() => codex.socket.terminate());
  const codexClosed = receivedAtClose(codex.socket, () => codex.received);
  await codex.initialize();
  const threadId = (await codex.request("thread/start", { cwd: workDir })).thread.id as string;
  const codexTurn = (await codex.request("turn/start", { threadId, input: [{ type: "text", text: LONG_TURN, text_elements: [] }] })).turn.id as string;

  const acp = await RawAcpClient.connect(`${wsBase}/acp`);
  cleanups.push(() => acp.socket.terminate());
  const acpClosed = receivedAtClose(acp.socket, () => acp.received);
  await acp.initialize();
  const acpSession = (await acp.request("session/new", { cwd: workDir, mcpServers: [] })).result.sessionId as string;
  acp.send({ jsonrpc: "2.0", id: 99, method: "session/prompt", params: { sessionId: acpSession, prompt: [{ type: "text", text: LONG_TURN }] } });

  await ask.waitFor(() => ask.eventsOf(askSession).some((e) => e.type === "tool.result"), "the Ask turn's bash step");
  await codex.waitFor((m) => m.method === "item/completed" && m.params.item.type === "commandExecution");
  await acp.next((m) => m.params?.update?.sessionUpdate === "tool_call_update" && m.params.update.status === "completed");

  /** Each client heard its turn end, in its dialect, before its connection closed with 1001. */
  async function expectEachToldBeforeClose(): Promise<void> {
    const askEnd = await askClosed;
    expect(askEnd.code).toBe(1001);
    expect(askEnd.before.filter((e: any) => ["turn.completed", "turn.failed", "turn.aborted"].includes(e.type))).toMatchObject([
      { type: "turn.aborted", payload: { turnId: askTurn } },
    ]);
    const codexEnd = await codexClosed;
    expect(codexEnd.code).toBe(1001);
    expect(codexEnd.before.filter((m: any) => m.method === "turn/completed")).toMatchObject([{ params: { threadId, turn: { id: codexTurn, status: "interrupted" } } }]);
    expect(codex.invalid).toEqual([]);
    const acpEnd = await acpClosed;
    expect(acpEnd.code).toBe(1001);
    expect(acpEnd.before.find((m: any) => m.id === 99)).toEqual({ jsonrpc: "2.0", id: 99, result: { stopReason: "cancelled" } });
  }
  return { expectEachToldBeforeClose };
}

describe("tau-gateway serve at the drain deadline", () => {
  it("interrupts the turns still running and tells Ask, Codex and ACP clients how each ended before closing, then exits 0", async () => {
    const served = await serveCli(["--port", "0", "--drain-timeout", "1000", "--log-level", "info"], cleanups);
    const clients = await clientsMidTurn(served.baseUrl);
    served.child.kill("SIGTERM");
    await clients.expectEachToldBeforeClose();
    expect(await served.exit).toEqual({ code: 0, signal: null });
    // Tau reported each interrupted turn: the gateway had to make up none of them.
    expect(served.stderr()).toMatch(/"drained":false/);
    expect(served.stderr()).toMatch(/"failedRequests":0/);
    expect(served.stderr()).toMatch(/"atDeadline":\{"interruptedTurns":3,"endedByGateway":0\}/);
  }, 60_000);

  it("when Tau does not answer the interrupt, reports the turns aborted itself, within its bound, and exits 0", async () => {
    const host = await spawnTauHost([], cleanups);
    const relay = await startCountingRelay(host.url);
    cleanups.push(() => relay.close());
    const served = await serveCli(["--port", "0", "--upstream", relay.url, "--drain-timeout", "500", "--log-level", "info"], cleanups);
    const clients = await clientsMidTurn(served.baseUrl);
    // From now on nothing the host sends reaches the gateway: not the interrupt's answer, nor the turns' ends.
    relay.hold();
    served.child.kill("SIGTERM");
    await clients.expectEachToldBeforeClose();
    expect(await served.exit).toEqual({ code: 0, signal: null });
    expect(relay.count("session.interrupt")).toBe(3);
    expect(served.stderr()).toMatch(/"failedRequests":0/);
    expect(served.stderr()).toMatch(/"atDeadline":\{"interruptedTurns":3,"endedByGateway":3\}/);
  }, 60_000);
});

describe("tau-gateway stdio at the drain deadline", () => {
  it("on SIGTERM mid-turn: the subscriber gets turn.aborted before its output ends, exit 0", async () => {
    const child = spawnStdio(["--drain-timeout", "300"], cleanups);
    const sessionId = (await child.client.request("session/create", { workspace: { workspacePath: workDir } })).session.sessionId as string;
    await child.client.request("session/subscribe", { sessionId });
    const { turnId } = await child.client.request("session/send", { sessionId, content: LONG_TURN });
    await child.client.waitFor(() => child.client.eventsOf(sessionId).some((e) => e.type === "tool.result"), "the turn's bash step");
    child.child.kill("SIGTERM");
    expect(await child.exit).toEqual({ code: 0, signal: null });
    const ends = child.client.eventsOf(sessionId).filter((e) => ["turn.completed", "turn.failed", "turn.aborted"].includes(e.type));
    expect(ends).toMatchObject([{ type: "turn.aborted", payload: { turnId } }]);
  }, 60_000);
});
