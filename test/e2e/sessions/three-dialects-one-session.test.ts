import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { eventually, expectContiguous, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { ECHO_TOOL } from "../../support/echo-tool.js";

/**
 * One session with an Ask, a Codex and an ACP client on it at once, as a phone, a terminal and an
 * editor would be: all three are asked about one command, the Ask client drops with its dialog
 * open, the Codex client decides, the editor's prompt is withdrawn; the Ask client comes back with
 * its cursor and misses nothing; a turn started from the editor reaches the other two.
 */


let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ commandTools: [ECHO_TOOL] });
});
afterAll(() => gw?.stop());

describe("an Ask, a Codex and an ACP client on one session", () => {
  it("are all asked, one decides after another dropped, the rest are told, and the dropped one catches up", async () => {
    // The phone: an Ask client that opted in to reverse requests and never answers one.
    const ask = await gw.client();
    let askAsked = false;
    ask.reverse = () => {
      askAsked = true;
      return new Promise(() => undefined);
    };
    const sessionId = await openSession(ask, { capabilities: ["reverseRequests"] });

    // The terminal: a Codex client on the same thread, deciding when the test says so.
    const codex = await gw.codexClient();
    await codex.initialize();
    await codex.request("thread/resume", { threadId: sessionId });
    let decide!: (answer: unknown) => void;
    codex.onRequest("item/commandExecution/requestApproval", () => new Promise((resolve) => (decide = resolve)));

    // The editor: an ACP client that loaded the session and leaves its permission request open.
    const acp = await RawAcpClient.connect(gw.acpUrl);
    acp.answer = () => undefined;
    await acp.initialize();
    expect((await acp.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();

    const { turnId } = await ask.request("session/send", { sessionId, content: '/tool echo-json {"a":7}\nDone' });
    const [, editorAsked] = await Promise.all([
      codex.waitFor((m) => m.method === "item/commandExecution/requestApproval"),
      acp.next((m) => m.method === "session/request_permission"),
      ask.waitFor(() => askAsked, "the Ask client to be asked"),
    ]);
    const cursor = ask.eventsOf(sessionId).at(-1)!.seq;

    // The phone drops with its dialog open: that decides nothing.
    const before = gw.app.websocketServer.clients.size;
    ask.socket.terminate();
    await eventually(() => gw.app.websocketServer.clients.size === before - 1, "the gateway to see the Ask client go");

    decide({ decision: "accept" });
    await codex.turnCompleted(turnId);
    // The editor's open request is withdrawn in its own words.
    expect(await acp.next((m) => m.method === "$/cancel_request")).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: editorAsked.id } });

    // The phone comes back with its cursor and gets exactly what it missed.
    const back = await gw.client();
    await back.request("initialize", { client: { name: "phone", version: "1" } });
    await back.request("session/subscribe", { sessionId, afterSeq: cursor });
    await waitForTerminal(back, sessionId, turnId);
    expectContiguous(back.eventsOf(sessionId), cursor + 1);
    expect(payloadsOf(back.eventsOf(sessionId), "approval.updated")).toEqual([expect.objectContaining({ id: "act_1", status: "approved" })]);
    expect(payloadsOf(back.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);

    // A turn started from the editor reaches the terminal and the phone.
    const prompted = await acp.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Hello from the editor" }] });
    expect(prompted.result).toEqual(expect.objectContaining({ stopReason: "end_turn" }));
    await back.waitFor(
      () => back.eventsOf(sessionId).some((e) => e.type === "turn.completed" && (e.payload as { response?: string }).response === "You said: Hello from the editor"),
      "the editor's turn on the phone",
    );
    await codex.waitFor((m) => m.method === "turn/completed" && m.params.turn.id !== turnId);

    expect(back.invalid).toEqual([]);
    expect(codex.invalid).toEqual([]);
    await acp.close();
    codex.socket.terminate();
    back.socket.terminate();
  });
});
