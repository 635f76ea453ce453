import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { openSession, waitForTerminal } from "../../support/ask-events.js";
import type { WebSocket } from "ws";
import type { AskTestClient } from "../../support/ask-client.js";
import type { CodexTestClient } from "../../support/codex-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { codexOnSession, editorOnSession } from "../../support/session-joiners.js";

/**
 * An Ask, a Codex and an ACP client on one session see each other's prompts live, each in its own
 * words: Ask as `user.message` events, Codex as userMessage items (its own included, as Codex
 * echoes input), ACP as `user_message_chunk`s — never the editor's own prompt, which it shows
 * already (an ACP agent does not echo the prompt it is given).
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw?.stop());

/** Everything each client was sent was valid in its dialect (ACP: by the official schema); then all three go. */
async function expectValidThenClose(ask: AskTestClient & { socket: WebSocket }, codex: CodexTestClient & { socket: WebSocket }, acp: RawAcpClient) {
  expect(ask.invalid).toEqual([]);
  expect(codex.invalid).toEqual([]);
  expect(agentMessageProblems(acp.received, acp.sent)).toEqual([]);
  await acp.close();
  codex.socket.terminate();
  ask.socket.terminate();
}

const userMessages = (events: readonly Event[]) => events.filter((e) => e.type === "user.message").map((e) => (e.payload as { text: string }).text);

describe("prompts of other clients", () => {
  it("reach every dialect live; the editor is not sent its own", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const codex = await codexOnSession(gw, sessionId);
    const acp = await editorOnSession(gw, sessionId);
    const userChunks = () => acp.received.filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === "user_message_chunk").map((m) => m.params.update);
    const codexUserItems = () => codex.notifications("item/completed").filter((m) => m.params.item.type === "userMessage").map((m) => m.params.item.content[0]?.text);

    // The phone's prompt.
    const phone = await ask.request("session/send", { sessionId, content: "From the phone" });
    await waitForTerminal(ask, sessionId, phone.turnId);
    await acp.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "user_message_chunk");
    expect(userChunks()).toEqual([{ sessionUpdate: "user_message_chunk", messageId: phone.turnId, content: { type: "text", text: "From the phone" } }]);
    await codex.turnCompleted(phone.turnId);

    // The editor's prompt: the others are told, the editor is not.
    const prompted = await acp.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "From the editor" }] });
    expect(prompted.result).toEqual({ stopReason: "end_turn" });
    await ask.waitFor(() => userMessages(ask.eventsOf(sessionId)).includes("From the editor"), "the editor's prompt on the phone");
    await codex.waitFor((m) => m.method === "item/completed" && m.params.item.type === "userMessage" && m.params.item.content[0]?.text === "From the editor");

    // The terminal's prompt.
    const terminal = await codex.turn(sessionId, "From the terminal");
    await acp.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "user_message_chunk" && m.params.update.content.text === "From the terminal");
    await ask.waitFor(() => userMessages(ask.eventsOf(sessionId)).includes("From the terminal"), "the terminal's prompt on the phone");
    expect(terminal.completed.params.turn.status).toBe("completed");

    // The editor steers into the phone's running turn: its words are still its own.
    const long = await ask.request("session/send", { sessionId, content: "/sleep 1500\nLong one" });
    await ask.waitForEvent(sessionId, "turn.started");
    await ask.waitFor(() => ask.eventsOf(sessionId).some((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === long.turnId), "the long turn");
    const steered = await acp.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Steer from the editor" }] });
    expect(steered.result).toEqual({ stopReason: "end_turn" });
    await ask.waitFor(() => userMessages(ask.eventsOf(sessionId)).includes("Steer from the editor"), "the editor's steering on the phone");
    await codex.waitFor((m) => m.method === "item/completed" && m.params.item.type === "userMessage" && m.params.item.content[0]?.text === "Steer from the editor");

    expect(userMessages(ask.eventsOf(sessionId))).toEqual(["From the phone", "From the editor", "From the terminal", "/sleep 1500\nLong one", "Steer from the editor"]);
    expect(codexUserItems()).toEqual(["From the phone", "From the editor", "From the terminal", "/sleep 1500\nLong one", "Steer from the editor"]);
    expect(userChunks().map((u) => u.content.text)).toEqual(["From the phone", "From the terminal", "/sleep 1500\nLong one"]);

    await expectValidThenClose(ask, codex, acp);
  });
});

describe("an approval mode changed by one client", () => {
  it("is told to the others: Ask gets mode.updated, ACP current_mode_update, Codex the new approvalPolicy", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask, { create: { mode: "on_request" } });
    const codex = await gw.codexClient();
    await codex.initialize();
    expect((await codex.request("thread/resume", { threadId: sessionId })).approvalPolicy).toBe("on-request");
    const acp = await RawAcpClient.connect(gw.acpUrl);
    await acp.initialize();
    const loaded = await acp.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });
    expect(loaded.result.modes.currentModeId).toBe("on_request");

    // The terminal turns approvals off.
    await codex.turn(sessionId, "Quietly", { approvalPolicy: "never" });
    await ask.waitForEvent(sessionId, "mode.updated");
    expect(ask.eventsOf(sessionId).filter((e) => e.type === "mode.updated").map((e) => e.payload)).toEqual([{ mode: "never", approvalMode: "off" }]);
    await acp.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "current_mode_update" && m.params.update.currentModeId === "auto");

    // The editor asks again before each call.
    expect((await acp.request("session/set_mode", { sessionId, modeId: "on_request" })).error).toBeUndefined();
    await ask.waitFor(() => ask.eventsOf(sessionId).filter((e) => e.type === "mode.updated").length === 2, "the editor's mode on the phone");
    expect(ask.eventsOf(sessionId).filter((e) => e.type === "mode.updated").at(-1)!.payload).toEqual({ mode: "on_request", approvalMode: "require" });
    const settings = await codex.waitFor((m) => m.method === "thread/settings/updated" && m.params.threadSettings.approvalPolicy === "on-request");
    expect(settings.params).toMatchObject({ threadId: sessionId, threadSettings: { approvalPolicy: "on-request", approvalsReviewer: "user", cwd: gw.cwd } });
    expect((await codex.request("thread/resume", { threadId: sessionId })).approvalPolicy).toBe("on-request");
    const { workspace } = await ask.request("workspace/readState", { sessionId });
    expect(workspace.mode).toBe("require");

    await expectValidThenClose(ask, codex, acp);
  });
});
