import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { eventually, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { ECHO_TOOL, CALL_ECHO } from "../../support/echo-tool.js";

/**
 * A turn belongs to its session, not to the connection that started it: in every dialect, the
 * client that started a turn drops while the turn waits on an approval, comes back on a new
 * connection, is asked again at once, answers — and the turn runs to its end. The gateway's drain
 * timeout is 0 here: no grace period after a drop is what keeps the turn alive.
 */

const APPROVAL_REQUEST = "item/commandExecution/requestApproval";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ commandTools: [ECHO_TOOL], drainTimeoutMs: 0 });
});
afterAll(() => gw?.stop());

/** Drops the connection at once and resolves once the gateway has seen it go. */
async function drop(socket: import("ws").WebSocket): Promise<void> {
  const before = gw.app.websocketServer.clients.size;
  socket.terminate();
  await eventually(() => gw.app.websocketServer.clients.size === before - 1, "the gateway to see the connection go");
}

/** An Ask client that only watches `sessionId`. */
async function watcherOf(sessionId: string) {
  const watcher = await gw.client();
  await watcher.request("initialize", { client: { name: "watcher", version: "1" } });
  await watcher.request("session/subscribe", { sessionId });
  return watcher;
}

describe("a turn whose starter drops and comes back", () => {
  it("runs on when an editor's connection drops mid-prompt; the editor loads the session again, is asked, and the turn completes", async () => {
    const editor = await RawAcpClient.connect(gw.acpUrl);
    editor.answer = () => undefined;
    await editor.initialize();
    const { sessionId } = (await editor.request("session/new", { cwd: gw.cwd, mcpServers: [] })).result;
    const watcher = await watcherOf(sessionId);
    editor.send({ jsonrpc: "2.0", id: 99, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: CALL_ECHO }] } });
    await editor.next((m) => m.method === "session/request_permission");
    const turnId = ((await watcher.waitForEvent(sessionId, "turn.started")).payload as { turnId: string }).turnId;

    await drop(editor.socket);

    // Back on a new connection: the pending approval is put to it at once (answered with its first option, allow once).
    const back = await RawAcpClient.connect(gw.acpUrl);
    await back.initialize();
    expect((await back.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();
    await back.next((m) => m.method === "session/request_permission");

    expect(await waitForTerminal(watcher, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    expect(payloadsOf(watcher.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);
    // The editor sees the rest of the turn live.
    const streamed = () =>
      back.received
        .filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk")
        .map((m) => m.params.update.content.text)
        .join("");
    await eventually(() => streamed().includes('returned: {"a":7}'), "the rest of the turn's text on the editor");
    await back.close();
    watcher.socket.terminate();
  });

  it("runs on when a Codex client's connection drops mid-turn; it resumes the thread, is asked, and the turn completes", async () => {
    const codex = await gw.codexClient();
    await codex.initialize();
    codex.onRequest(APPROVAL_REQUEST, () => undefined);
    const { thread } = await codex.request("thread/start", { cwd: gw.cwd });
    const { turn } = await codex.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: CALL_ECHO, text_elements: [] }] });
    await codex.waitFor((m) => m.method === APPROVAL_REQUEST);

    await drop(codex.socket);

    const back = await gw.codexClient();
    await back.initialize();
    back.onRequest(APPROVAL_REQUEST, () => ({ decision: "accept" }));
    await back.request("thread/resume", { threadId: thread.id });
    const completed = await back.turnCompleted(turn.id);
    expect(completed.params.turn.status).toBe("completed");
    expect(back.serverRequests(APPROVAL_REQUEST)).toHaveLength(1);
    expect(back.invalid).toEqual([]);
    back.socket.terminate();
  });

  it("runs on when an Ask client's connection drops mid-turn; it subscribes again, is asked, and the turn completes", async () => {
    const ask = await gw.client();
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => (asked = resolve));
    ask.reverse = () => {
      asked();
      return new Promise(() => undefined);
    };
    const sessionId = await openSession(ask, { capabilities: ["reverseRequests"] });
    const { turnId } = await ask.request("session/send", { sessionId, content: CALL_ECHO });
    await wasAsked;
    const cursor = ask.eventsOf(sessionId).at(-1)!.seq;

    await drop(ask.socket);

    const back = await gw.client();
    back.reverse = (method) => {
      expect(method).toBe("interaction/requestPermission");
      return Promise.resolve({ decision: "allow" });
    };
    await back.request("initialize", { client: { name: "phone", version: "1" }, capabilities: ["reverseRequests"] });
    await back.request("session/subscribe", { sessionId, afterSeq: cursor });
    expect(await waitForTerminal(back, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    expect(payloadsOf(back.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);
    expect(back.invalid).toEqual([]);
    back.socket.terminate();
  });
});

describe("an editor that closes a session another client's turn is running in", () => {
  it("lets go of it without stopping that turn; its prompt steered into the turn is answered cancelled, and the turn completes", async () => {
    // The turn is started by an Ask client that takes no reverse requests: nobody is asked but the editor.
    const starter = await gw.client();
    const sessionId = await openSession(starter);
    const { turnId } = await starter.request("session/send", { sessionId, content: CALL_ECHO });
    const approvalId = ((await starter.waitForEvent(sessionId, "approval.required")).payload as { id: string }).id;

    const editor = await RawAcpClient.connect(gw.acpUrl);
    editor.answer = () => undefined;
    await editor.initialize();
    expect((await editor.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();
    await editor.next((m) => m.method === "session/request_permission");
    // The editor's prompt steers into the running turn, then the editor closes the session.
    editor.send({ jsonrpc: "2.0", id: 77, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "and then stop" }] } });
    await starter.waitForEvent(sessionId, "queue.updated");
    expect(await editor.request("session/close", { sessionId })).toMatchObject({ result: {} });

    // The turn is the starter's: it still waits on its approval, and completes once approved.
    await starter.request("interaction/approve", { sessionId, interactionId: approvalId });
    expect(await waitForTerminal(starter, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    expect(payloadsOf(starter.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);
    // The editor's own prompt: cancelled (ACP: close cancels the connection's work).
    expect(await editor.next((m) => m.id === 77)).toMatchObject({ result: { stopReason: "cancelled" } });
    await editor.close();
    starter.socket.terminate();
  });
});
