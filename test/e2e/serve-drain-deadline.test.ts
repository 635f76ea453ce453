import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { RawAcpClient } from "../support/acp-raw-client.js";
import { AskTestClient } from "../support/ask-client.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { serveCli } from "../support/cli.js";
import { CodexTestClient } from "../support/codex-client.js";
import { spawnStdio } from "../support/stdio-child.js";

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

describe("tau-gateway serve at the drain deadline", () => {
  it("interrupts the turns still running and tells Ask, Codex and ACP clients how each ended before closing, then exits 0", async () => {
    const served = await serveCli(["--port", "0", "--drain-timeout", "1000", "--log-level", "info"], cleanups);
    const wsBase = served.baseUrl.replace("http://", "ws://");

    // Ask over WebSocket /rpc: subscribed to a session with a long turn.
    const ask = await AskTestClient.websocket(`${wsBase}/rpc`);
    cleanups.push(() => ask.socket.terminate());
    const askClosed = receivedAtClose(ask.socket, () => ask.eventsOf(askSession));
    const askSession = (await ask.request("session/create", { workspace: { workspacePath: workDir } })).session.sessionId as string;
    await ask.request("session/subscribe", { sessionId: askSession });
    const askTurn = (await ask.request("session/send", { sessionId: askSession, content: LONG_TURN })).turnId as string;

    // Codex over WebSocket /: a thread with a long turn.
    const codex = await CodexTestClient.websocket(`${wsBase}/`);
    cleanups.push(() => codex.socket.terminate());
    const codexClosed = receivedAtClose(codex.socket, () => codex.received);
    await codex.initialize();
    const threadId = (await codex.request("thread/start", { cwd: workDir })).thread.id as string;
    const codexTurn = (await codex.request("turn/start", { threadId, input: [{ type: "text", text: LONG_TURN, text_elements: [] }] })).turn.id as string;

    // ACP over WebSocket /acp: a prompt whose turn is long.
    const acp = await RawAcpClient.connect(`${wsBase}/acp`);
    cleanups.push(() => acp.socket.terminate());
    const acpClosed = receivedAtClose(acp.socket, () => acp.received);
    await acp.initialize();
    const acpSession = (await acp.request("session/new", { cwd: workDir, mcpServers: [] })).result.sessionId as string;
    acp.send({ jsonrpc: "2.0", id: 99, method: "session/prompt", params: { sessionId: acpSession, prompt: [{ type: "text", text: LONG_TURN }] } });

    // Every turn is running (its bash step reported) before the signal.
    await ask.waitFor(() => ask.eventsOf(askSession).some((e) => e.type === "tool.result"), "the Ask turn's bash step");
    await codex.waitFor((m) => m.method === "item/completed" && m.params.item.type === "commandExecution");
    await acp.next((m) => m.params?.update?.sessionUpdate === "tool_call_update" && m.params.update.status === "completed");
    served.child.kill("SIGTERM");

    const askEnd = await askClosed;
    expect(askEnd.code).toBe(1001);
    expect(askEnd.before.filter((e: any) => ["turn.completed", "turn.failed", "turn.aborted"].includes(e.type))).toMatchObject([
      { type: "turn.aborted", payload: { turnId: askTurn } },
    ]);

    const codexEnd = await codexClosed;
    expect(codexEnd.code).toBe(1001);
    const completed = codexEnd.before.filter((m: any) => m.method === "turn/completed");
    expect(completed).toMatchObject([{ params: { threadId, turn: { id: codexTurn, status: "interrupted" } } }]);
    expect(codex.invalid).toEqual([]);

    const acpEnd = await acpClosed;
    expect(acpEnd.code).toBe(1001);
    expect(acpEnd.before.find((m: any) => m.id === 99)).toEqual({ jsonrpc: "2.0", id: 99, result: { stopReason: "cancelled" } });

    expect(await served.exit).toEqual({ code: 0, signal: null });
    // Tau reported each interrupted turn: the gateway had to make up none of them.
    expect(served.stderr()).toMatch(/"drained":false/);
    expect(served.stderr()).toMatch(/"atDeadline":\{"interruptedTurns":3,"endedByGateway":0\}/);
    expect(served.stderr()).toMatch(/"failedRequests":0/);
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
