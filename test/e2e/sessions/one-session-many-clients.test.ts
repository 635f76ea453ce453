import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import type { AskTestClient } from "../../support/ask-client.js";
import { eventually, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import type { CodexTestClient } from "../../support/codex-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { snapshotOnHost, userTexts } from "../../support/tau-client.js";
import { ECHO_TOOL, CALL_ECHO, deferred } from "../../support/echo-tool.js";

/**
 * One Tau session worked by clients of several dialects at once, on one real gateway in front of
 * the embedded host (DESIGN §2): a session belongs to no client — every attached client is asked
 * when it needs a decision, a client leaving decides nothing, and every dialect tells its real state.
 */


let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ commandTools: [ECHO_TOOL] });
});
afterAll(() => gw?.stop());

/** Drops `client`'s connection at once and resolves once the gateway has seen it go. */
async function drop(client: { socket: import("ws").WebSocket }): Promise<void> {
  const before = gw.app.websocketServer.clients.size;
  client.socket.terminate();
  await eventually(() => gw.app.websocketServer.clients.size === before - 1, "the gateway to see the connection go");
}

/** An Ask client that opted in to reverse requests, on a new session; its permission requests wait for `answer`. */
async function askingAskClient(answer: Promise<unknown>): Promise<{ ask: AskTestClient & { socket: import("ws").WebSocket }; sessionId: string; asked: Promise<void> }> {
  const ask = await gw.client();
  const asked = deferred<void>();
  ask.reverse = (method) => {
    expect(method).toBe("interaction/requestPermission");
    asked.resolve();
    return answer;
  };
  const sessionId = await openSession(ask, { capabilities: ["reverseRequests"] });
  return { ask, sessionId, asked: asked.promise };
}

/** A Codex client that resumed `threadId`; its approval requests wait for `answer`. */
async function codexOn(threadId: string, answer: Promise<unknown>): Promise<CodexTestClient & { socket: import("ws").WebSocket }> {
  const codex = await gw.codexClient();
  await codex.initialize();
  await codex.request("thread/resume", { threadId });
  codex.onRequest("item/commandExecution/requestApproval", () => answer);
  return codex;
}

const approvalsOf = (events: readonly Event[]) => payloadsOf<{ id: string; status: string }>(events, "approval.updated");

/**
 * After a client that was asked dropped: `observer` still finds act_1 pending with no verdict (anything
 * the drop set off is done by the time the gateway answers the next request); once `decide` answers
 * it, the turn ends with act_1 approved.
 */
async function expectPendingUntilApproved(observer: AskTestClient, sessionId: string, turnId: string, decide: () => unknown): Promise<void> {
  expect((await observer.request("interaction/list", { sessionId })).interactions).toEqual([expect.objectContaining({ id: "act_1" })]);
  expect(approvalsOf(observer.eventsOf(sessionId))).toEqual([]);

  await decide();
  await waitForTerminal(observer, sessionId, turnId);
  expect(approvalsOf(observer.eventsOf(sessionId))).toEqual([expect.objectContaining({ id: "act_1", status: "approved" })]);
}

describe("an approval asked of several clients", () => {
  it("stays pending when a Codex client that was asked drops; the Ask client that stays decides it", async () => {
    const askAnswer = deferred<unknown>();
    const { ask, sessionId, asked } = await askingAskClient(askAnswer.promise);
    const codex = await codexOn(sessionId, new Promise(() => undefined));
    const { turnId } = await ask.request("session/send", { sessionId, content: CALL_ECHO });
    await Promise.all([asked, codex.waitFor((m) => m.method === "item/commandExecution/requestApproval")]);

    await drop(codex);
    await expectPendingUntilApproved(ask, sessionId, turnId, () => askAnswer.resolve({ decision: "allow" }));
    expect(payloadsOf(ask.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);
    expect(ask.invalid).toEqual([]);
    ask.socket.terminate();
  });

  it("stays pending when an Ask client that was asked drops; the Codex client that stays decides it", async () => {
    const { ask, sessionId, asked } = await askingAskClient(new Promise(() => undefined));
    const codexAnswer = deferred<unknown>();
    const codex = await codexOn(sessionId, codexAnswer.promise);
    const watcher = await gw.client();
    await openSessionWatch(watcher, sessionId);
    const { turnId } = await ask.request("session/send", { sessionId, content: CALL_ECHO });
    await Promise.all([asked, codex.waitFor((m) => m.method === "item/commandExecution/requestApproval")]);

    await drop(ask);
    await expectPendingUntilApproved(watcher, sessionId, turnId, () => codexAnswer.resolve({ decision: "accept" }));
    expect(payloadsOf(watcher.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);
    expect(codex.invalid).toEqual([]);
    codex.socket.terminate();
    watcher.socket.terminate();
  });

  it("stays pending when the last client asked drops, for the next one to decide", async () => {
    const { ask, sessionId, asked } = await askingAskClient(new Promise(() => undefined));
    const watcher = await gw.client();
    await openSessionWatch(watcher, sessionId);
    const { turnId } = await ask.request("session/send", { sessionId, content: CALL_ECHO });
    await asked;

    await drop(ask);
    await expectPendingUntilApproved(watcher, sessionId, turnId, () => watcher.request("interaction/approve", { sessionId, interactionId: "act_1" }));
    watcher.socket.terminate();
  });
});

/** An ACP client on the gateway that loaded `sessionId`; closed after the test by the caller. */
async function acpOn(sessionId: string): Promise<RawAcpClient> {
  const acp = await RawAcpClient.connect(gw.acpUrl);
  await acp.initialize();
  const loaded = await acp.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });
  expect(loaded.error).toBeUndefined();
  return acp;
}

describe("a session closed by one client", () => {
  it("is refused to an ACP client that had loaded it: session/prompt answers not found, and no turn runs", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const acp = await acpOn(sessionId);
    await ask.request("session/close", { sessionId });

    const prompted = await acp.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Hello" }] });
    expect(prompted.error).toEqual({ code: -32002, message: "Resource not found", data: { sessionId } });
    expect(userTexts(await snapshotOnHost(gw.host!.url, sessionId))).toEqual([]);
    await acp.close();
    ask.socket.terminate();
  });
});

describe("a turn another client started", () => {
  it("is stopped by an ACP editor's session/cancel", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const acp = await acpOn(sessionId);
    const { turnId } = await ask.request("session/send", { sessionId, content: "/sleep 20000\nToo late" });
    await ask.waitForEvent(sessionId, "turn.started");

    acp.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    expect(await waitForTerminal(ask, sessionId, turnId)).toMatchObject({ type: "turn.aborted" });
    await acp.close();
    ask.socket.terminate();
  });

  it("takes an ACP editor's prompt as steering, as Codex and Ask do; the prompt is answered when the turn that took it settles", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const acp = await acpOn(sessionId);
    await ask.request("session/send", { sessionId, content: "/sleep 2000\nfirst" });
    await ask.waitForEvent(sessionId, "turn.started");

    const prompted = await acp.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "steer words" }] });
    expect(prompted).toMatchObject({ result: { stopReason: "end_turn" } });
    const streamed = acp.received
      .filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk")
      .map((m) => m.params.update.content.text)
      .join("");
    expect(streamed).toContain("You said: steer words");
    expect(userTexts(await snapshotOnHost(gw.host!.url, sessionId))).toEqual(["/sleep 2000\nfirst", "steer words"]);
    await acp.close();
    ask.socket.terminate();
  });
});

describe("the approval policy a Codex client is told", () => {
  it("is the session's own: thread/resume of a session an Ask client created `auto` says `never`, one created asking says `on-request`", async () => {
    const ask = await gw.client();
    const auto = await openSession(ask, { create: { mode: "auto" } });
    const { session } = await ask.request("session/create", { mode: "on_request" });
    const codex = await gw.codexClient();
    await codex.initialize();
    expect((await codex.request("thread/resume", { threadId: auto })).approvalPolicy).toBe("never");
    expect((await codex.request("thread/resume", { threadId: session.sessionId })).approvalPolicy).toBe("on-request");
    expect(codex.invalid).toEqual([]);
    codex.socket.terminate();
    ask.socket.terminate();
  });
});

/** An Ask client that only watches `sessionId` (no reverse requests). */
async function openSessionWatch(client: AskTestClient, sessionId: string): Promise<void> {
  await client.request("initialize", { client: { name: "watcher", version: "1" } });
  await client.request("session/subscribe", { sessionId });
}

