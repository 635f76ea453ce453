import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { ECHO_TOOL, CALL_ECHO, deferred } from "../../support/echo-tool.js";

/**
 * Clients that attach to a session while an approval is pending — a Codex client resuming the
 * thread, an editor loading the session, an Ask client subscribing — are asked at once, each in
 * its own words, as the clients that were there when it opened were; whoever decides first, every
 * other prompt is withdrawn in its own words (Codex serverRequest/resolved, ACP $/cancel_request,
 * Ask approval.updated), the late joiners' included. Plans alike: a Codex client that takes
 * experimental server requests gets the plan question, an editor session/request_permission.
 */

const APPROVAL_REQUEST = "item/commandExecution/requestApproval";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ commandTools: [ECHO_TOOL] });
});
afterAll(() => gw?.stop());

/** An editor that loads the session and leaves its permission request unanswered; resolves once it is asked. */
async function editorLoadsAndIsAsked(sessionId: string) {
  const editor = await RawAcpClient.connect(gw.acpUrl);
  editor.answer = () => undefined;
  await editor.initialize();
  const loaded = await editor.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });
  expect(loaded.error).toBeUndefined();
  const editorAsked = await editor.next((m) => m.method === "session/request_permission");
  // After the answer: an editor may refuse a request about a session it has not been told about yet.
  expect(editor.received.indexOf(editorAsked)).toBeGreaterThan(editor.received.indexOf(loaded));
  return { editor, editorAsked };
}

describe("a client that attaches while an approval is pending", () => {
  it("is asked at once in every dialect; the one that decides withdraws the others' prompts", async () => {
    // The turn is started by an Ask client that takes no reverse requests: nobody is asked yet.
    const starter = await gw.client();
    const sessionId = await openSession(starter);
    const { turnId } = await starter.request("session/send", { sessionId, content: CALL_ECHO });
    const approvalId = ((await starter.waitForEvent(sessionId, "approval.required")).payload as { id: string }).id;
    const [toolUse] = payloadsOf<{ id: string }>(starter.eventsOf(sessionId), "tool.use");

    // A Codex client resumes the thread, the first Codex client ever to touch it.
    const codex = await gw.codexClient();
    await codex.initialize();
    codex.onRequest(APPROVAL_REQUEST, () => undefined);
    const resumed = await codex.requestRaw("thread/resume", { threadId: sessionId });
    expect(resumed.result.thread.status).toEqual({ type: "active", activeFlags: ["waitingOnApproval"] });
    const codexAsked = await codex.waitFor((m) => m.method === APPROVAL_REQUEST);
    expect(codexAsked.params).toMatchObject({ threadId: sessionId, turnId, itemId: toolUse!.id });
    // After the answer that loaded the thread, as every notification loading it brings.
    expect(codex.received.indexOf(codexAsked)).toBeGreaterThan(codex.received.indexOf(resumed));

    // An editor loads the session.
    const { editor, editorAsked } = await editorLoadsAndIsAsked(sessionId);

    // An Ask client that takes reverse requests subscribes, is asked, and decides.
    const phone = await gw.client();
    const phoneAnswer = deferred<unknown>();
    const phoneAsked = deferred<Record<string, unknown>>();
    phone.reverse = (method, params) => {
      expect(method).toBe("interaction/requestPermission");
      phoneAsked.resolve(params);
      return phoneAnswer.promise;
    };
    await phone.request("initialize", { client: { name: "phone", version: "1" }, capabilities: ["reverseRequests"] });
    await phone.request("session/subscribe", { sessionId, deliveryKind: "live" });
    expect(await phoneAsked.promise).toMatchObject({ sessionId, interactionId: approvalId, toolName: "echo-json", input: { a: 7 } });
    phoneAnswer.resolve({ decision: "allow" });

    expect(await waitForTerminal(starter, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    expect(payloadsOf(starter.eventsOf(sessionId), "approval.updated")).toEqual([expect.objectContaining({ id: approvalId, status: "approved" })]);
    expect(payloadsOf(starter.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);
    // Everyone else's prompt is withdrawn, in their own words.
    await codex.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === codexAsked.id);
    expect(await editor.next((m) => m.method === "$/cancel_request")).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: editorAsked.id } });
    await phone.waitFor(() => payloadsOf(phone.eventsOf(sessionId), "approval.updated").length === 1, "the phone to hear the decision");
    // Asked once each.
    expect(codex.serverRequests(APPROVAL_REQUEST)).toHaveLength(1);
    expect(editor.received.filter((m) => m.method === "session/request_permission")).toHaveLength(1);

    expect(codex.invalid).toEqual([]);
    expect(phone.invalid).toEqual([]);
    await editor.close();
    for (const client of [codex, phone, starter]) client.socket.terminate();
  });

  it("is asked on thread/resume while another Codex client has the thread loaded, and its decision withdraws that client's request", async () => {
    const starter = await gw.client();
    const sessionId = await openSession(starter);
    const first = await gw.codexClient();
    await first.initialize();
    await first.request("thread/resume", { threadId: sessionId });
    first.onRequest(APPROVAL_REQUEST, () => undefined);
    const { turnId } = await starter.request("session/send", { sessionId, content: CALL_ECHO });
    const firstAsked = await first.waitFor((m) => m.method === APPROVAL_REQUEST);

    // The laptop's terminal comes back on a new connection and resumes the thread.
    const second = await gw.codexClient();
    await second.initialize();
    second.onRequest(APPROVAL_REQUEST, () => ({ decision: "accept" }));
    const resumed = await second.request("thread/resume", { threadId: sessionId, excludeTurns: true });
    expect(resumed.thread.status).toEqual({ type: "active", activeFlags: ["waitingOnApproval"] });
    const secondAsked = await second.waitFor((m) => m.method === APPROVAL_REQUEST);
    expect(secondAsked.params).toMatchObject({ threadId: sessionId, turnId, itemId: firstAsked.params.itemId });

    const completed = await second.turnCompleted(turnId);
    expect(completed.params.turn.status).toBe("completed");
    await first.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === firstAsked.id);
    await second.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === secondAsked.id);
    const command = second.notifications("item/completed").find((m) => m.params.item.id === firstAsked.params.itemId);
    expect(command?.params.item).toMatchObject({ type: "commandExecution", status: "completed" });
    expect(payloadsOf(starter.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ output: '{"a":7}', isError: false })]);

    expect(first.invalid).toEqual([]);
    expect(second.invalid).toEqual([]);
    for (const client of [first, second, starter]) client.socket.terminate();
  });

  it("is asked a pending question too: a Codex client resuming the thread is told waitingOnUserInput and sent the question", async () => {
    const starter = await gw.client();
    const sessionId = await openSession(starter);
    const { turnId } = await starter.request("session/send", { sessionId, content: '/tool ask_user {"question":"Which colour?","options":["red","blue"]}' });
    await starter.waitForEvent(sessionId, "input.requested");

    const codex = await gw.codexClient();
    await codex.initialize();
    codex.onRequest("item/tool/requestUserInput", (params) => ({ answers: { [params.questions[0].id]: { answers: ["blue"] } } }));
    const resumed = await codex.request("thread/resume", { threadId: sessionId, excludeTurns: true });
    expect(resumed.thread.status).toEqual({ type: "active", activeFlags: ["waitingOnUserInput"] });
    const asked = await codex.waitFor((m) => m.method === "item/tool/requestUserInput");
    expect(asked.params.questions[0]).toMatchObject({ question: "Which colour?", options: [{ label: "red" }, { label: "blue" }] });

    expect(await waitForTerminal(starter, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    expect(payloadsOf(starter.eventsOf(sessionId), "input.resolved")).toEqual([expect.objectContaining({ response: "blue" })]);
    expect(codex.invalid).toEqual([]);
    for (const client of [codex, starter]) client.socket.terminate();
  });
  it("is asked about a pending plan: a Codex client resuming the thread and an editor loading the session, the first answer deciding", async () => {
    // Proposed while nobody who can decide a plan is attached (an Ask client decides with plan/*).
    const starter = await gw.client();
    const sessionId = await openSession(starter);
    const { turnId } = await starter.request("session/send", { sessionId, content: '/tool submit_plan {"plan":"- read the code\\n- write the test"}' });
    const planId = ((await starter.waitForEvent(sessionId, "plan.proposed")).payload as { id: string }).id;

    const { editor, editorAsked } = await editorLoadsAndIsAsked(sessionId);
    expect((editorAsked.params as { options: Array<{ optionId: string }> }).options.map((o) => o.optionId)).toEqual(["allow_once", "reject_once"]);
    expect((editorAsked.params as { toolCall: unknown }).toolCall).toMatchObject({ status: "pending", rawInput: { plan: "- read the code\n- write the test" } });
    // The plan it missed, for its plan panel, before it is asked.
    const planUpdates = editor.received.filter((m) => m.method === "session/update" && (m.params as any).update.sessionUpdate === "plan");
    expect(planUpdates.map((m) => (m.params as any).update.entries.map((e: { content: string }) => e.content))).toEqual([["read the code", "write the test"]]);
    expect(editor.received.indexOf(planUpdates[0]!)).toBeLessThan(editor.received.indexOf(editorAsked));

    const codex = await gw.codexClient();
    await codex.initialize();
    const codexAnswer = deferred<unknown>();
    codex.onRequest("item/tool/requestUserInput", () => codexAnswer.promise);
    const resumed = await codex.requestRaw("thread/resume", { threadId: sessionId, excludeTurns: true });
    expect(resumed.result.thread.status).toEqual({ type: "active", activeFlags: ["waitingOnUserInput"] });
    const codexAsked = await codex.waitFor((m) => m.method === "item/tool/requestUserInput");
    expect(codex.received.indexOf(codexAsked)).toBeGreaterThan(codex.received.indexOf(resumed));
    expect(codexAsked.params).toMatchObject({ threadId: sessionId, turnId, itemId: planId });
    expect(codexAsked.params.questions[0].question).toContain("- read the code");
    codexAnswer.resolve({ answers: { [codexAsked.params.questions[0].id]: { answers: ["Approve"] } } });

    expect(await starter.waitForEvent(sessionId, "plan.approved")).toMatchObject({ payload: { id: planId } });
    expect(await waitForTerminal(starter, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    // The editor's request is withdrawn; each was asked once.
    expect(await editor.next((m) => m.method === "$/cancel_request")).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: editorAsked.id } });
    await codex.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === codexAsked.id);
    expect(codex.serverRequests("item/tool/requestUserInput")).toHaveLength(1);
    expect(editor.received.filter((m) => m.method === "session/request_permission")).toHaveLength(1);
    expect(payloadsOf(starter.eventsOf(sessionId), "plan.rejected")).toEqual([]);

    expect(codex.invalid).toEqual([]);
    await editor.close();
    for (const client of [codex, starter]) client.socket.terminate();
  });

  it("is not asked about a plan a Codex client without the experimental API cannot answer, and a plan proposed after it resumed is asked once", async () => {
    const starter = await gw.client();
    const sessionId = await openSession(starter);
    // A resumed connection that takes questions, attached before the plan: asked as the plan is proposed, and only then.
    const codex = await gw.codexClient();
    await codex.initialize();
    const asked = deferred<Record<string, any>>();
    const answer = deferred<unknown>();
    codex.onRequest("item/tool/requestUserInput", (params) => {
      asked.resolve(params);
      return answer.promise;
    });
    await codex.request("thread/resume", { threadId: sessionId, excludeTurns: true });
    // A connection without the experimental API, resuming while the plan waits: never asked.
    const plain = await gw.codexClient();
    await plain.initialize(null);
    const { turnId } = await starter.request("session/send", { sessionId, content: '/tool submit_plan {"plan":"- one step"}' });
    await starter.waitForEvent(sessionId, "plan.proposed");
    await plain.request("thread/resume", { threadId: sessionId, excludeTurns: true });

    const question = await asked.promise;
    expect(question.turnId).toBe(turnId);
    answer.resolve({ answers: { [question.questions[0].id]: { answers: ["Not now"] } } });
    expect(await starter.waitForEvent(sessionId, "plan.rejected")).toMatchObject({ payload: { feedback: "Not now" } });
    expect(await waitForTerminal(starter, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    expect(codex.serverRequests("item/tool/requestUserInput")).toHaveLength(1);
    expect(plain.serverRequests("item/tool/requestUserInput")).toHaveLength(0);
    expect(codex.invalid).toEqual([]);
    expect(plain.invalid).toEqual([]);
    for (const client of [codex, plain, starter]) client.socket.terminate();
  });
});
