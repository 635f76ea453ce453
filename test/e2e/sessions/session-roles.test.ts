import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { eventually, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { CALL_ECHO, deferred, ECHO_TOOL } from "../../support/echo-tool.js";
import { sdkClient, webSocketTransport } from "../../support/mcp-client.js";
import { startSecureGateway, type SecureGateway } from "../../support/secure-gateway.js";

/**
 * Roles per principal through a real gateway over real sockets, in every dialect: alice creates
 * sessions (their owner), bob's tokens-file default is observer, carol's is controller, dave is of
 * another tenant, ops is an operator. An observer is refused prompt, interrupt and answers in its
 * dialect's own error, and its reply to an approval decides nothing (the approval stays pending
 * until a controller decides it); a grant lets it act, a revoke refuses it again; only the owner
 * (or an operator) grants; and the HTTP route administers the same roles.
 */

const TOKENS = { alice: "tok-alice-91ab", bob: "tok-bob-22cd", carol: "tok-carol-33ef", dave: "tok-dave-44aa", ops: "tok-ops-55bb" };
const FORBIDDEN = -32011;

let gw: SecureGateway;
const closers: Array<() => unknown> = [];

beforeAll(async () => {
  const tokens = TokenRegistry.parse(
    JSON.stringify([
      { id: "alice", token: TOKENS.alice, tenant: "team" },
      { id: "bob", token: TOKENS.bob, tenant: "team", sessionRole: "observer" },
      { id: "carol", token: TOKENS.carol, tenant: "team" },
      { id: "dave", token: TOKENS.dave, tenant: "other" },
      { id: "ops", token: TOKENS.ops, tenant: "operations", operator: true },
    ]),
    "tokens.json",
  );
  gw = await startSecureGateway({ tokens, commandTools: [ECHO_TOOL] });
});

afterAll(async () => {
  for (const close of closers) await close();
  await gw?.stop();
});

const bearer = (who: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[who]}` });

async function ask(who: keyof typeof TOKENS, capabilities?: string[]): Promise<AskTestClient> {
  const client = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: bearer(who) });
  closers.push(() => client.socket.terminate());
  await client.request("initialize", { client: { name: `roles-${who}`, version: "1" }, ...(capabilities ? { capabilities } : {}) });
  return client;
}

/** A session alice created (and so owns), subscribed by each client given. */
async function aliceSession(alice: AskTestClient, ...watchers: AskTestClient[]): Promise<string> {
  const { session } = await alice.request("session/create", {});
  for (const client of [alice, ...watchers]) await client.request("session/subscribe", { sessionId: session.sessionId });
  return session.sessionId as string;
}

/** Resolves once the bridge logged that `who`'s reply to `method` was refused. */
const replyRefused = (who: string, method: string) => eventually(() => gw.bridgeLog().some((line) => line.includes(`${method} reply refused: principal '${who}'`)), `${who}'s ${method} reply refused`);

const pendingIds = async (client: AskTestClient, sessionId: string) => ((await client.request("interaction/list", { sessionId })).interactions as Array<{ id: string }>).map((i) => i.id);

describe("Ask", () => {
  it("refuses an observer's prompt, interrupt, close and answer with -32011; a controller's work", async () => {
    const [alice, bob, carol] = [await ask("alice"), await ask("bob"), await ask("carol")];
    const sessionId = await aliceSession(alice, bob, carol);

    const prompt = await rpcError(bob.request("session/send", { sessionId, content: "Hi" }));
    expect(prompt).toMatchObject({ code: FORBIDDEN, message: `-32011: ${"session/send: principal 'bob' is an observer of this session; observers cannot prompt"}` });
    expect(prompt.data).toMatchObject({ sessionId, principal: "bob", role: "observer", action: "prompt" });
    expect(await rpcError(bob.request("session/abort", { sessionId }))).toMatchObject({ code: FORBIDDEN, message: expect.stringContaining("observers cannot interrupt") });
    expect(await rpcError(bob.request("session/close", { sessionId }))).toMatchObject({ code: FORBIDDEN, message: expect.stringContaining("observers cannot close the session") });

    const { turnId } = await carol.request("session/send", { sessionId, content: CALL_ECHO });
    await alice.waitForEvent(sessionId, "approval.required");
    const refused = await rpcError(bob.request("interaction/approve", { sessionId, interactionId: "act_1" }));
    expect(refused).toMatchObject({ code: FORBIDDEN, message: `-32011: ${"interaction/approve: principal 'bob' is an observer of this session; observers cannot answer approvals or questions"}` });
    expect(await pendingIds(carol, sessionId)).toEqual(["act_1"]);
    expect(await carol.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: true, interactionId: "act_1" });
    expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
    expect(payloadsOf(alice.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
    expect(await carol.request("session/abort", { sessionId })).toEqual({ aborted: true, sessionId });
  });

  it("does not ask an observer, and tells it mayDecide: false; one made observer after it was asked decides nothing with its answer", async () => {
    const alice = await ask("alice");
    const bob = await ask("bob", ["reverseRequests"]);
    const carol = await ask("carol", ["reverseRequests"]);
    let bobAsked = false;
    bob.reverse = async () => {
      bobAsked = true;
      return { decision: "accept" };
    };
    const carolAsked = deferred<void>();
    const demoted = deferred<void>();
    carol.reverse = async () => {
      carolAsked.resolve();
      await demoted.promise;
      return { decision: "accept" };
    };
    const sessionId = await aliceSession(alice, bob, carol);
    const { turnId } = await alice.request("session/send", { sessionId, content: CALL_ECHO });
    await carolAsked.promise;
    // The observer watches the approval (its event) and is told it may not decide it; a controller may.
    await bob.waitForEvent(sessionId, "approval.required");
    expect((await bob.request("interaction/list", { sessionId })).interactions).toEqual([expect.objectContaining({ id: "act_1", kind: "approval", status: "pending", mayDecide: false })]);
    expect((await carol.request("interaction/list", { sessionId })).interactions).toEqual([expect.objectContaining({ id: "act_1", mayDecide: true })]);

    await alice.request("session/setRole", { sessionId, principal: "carol", role: "observer" });
    demoted.resolve();
    await replyRefused("carol", "interaction/requestPermission");
    expect(await pendingIds(alice, sessionId)).toEqual(["act_1"]);
    expect(payloadsOf(alice.eventsOf(sessionId), "approval.updated")).toEqual([]);
    await alice.request("interaction/reject", { sessionId, interactionId: "act_1", feedback: "no" });
    expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
    expect(payloadsOf(alice.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "rejected", feedback: "no" }]);
    await bob.waitForEvent(sessionId, "approval.updated");
    // Every request went out before carol answered: the observer was never one of them.
    expect(bobAsked).toBe(false);
  });

  it("grant then allowed, revoke then refused; only the owner grants; session/roles lists them", async () => {
    const [alice, bob, carol] = [await ask("alice"), await ask("bob"), await ask("carol")];
    const sessionId = await aliceSession(alice, bob, carol);

    const notOwner = await rpcError(carol.request("session/setRole", { sessionId, principal: "bob", role: "controller" }));
    expect(notOwner).toMatchObject({ code: FORBIDDEN, message: `-32011: ${"session/setRole: principal 'carol' is a controller of this session; controllers cannot grant or revoke roles"}` });
    expect(await rpcError(bob.request("session/setRole", { sessionId, principal: "bob", role: "owner" }))).toMatchObject({ code: FORBIDDEN });

    expect(await alice.request("session/setRole", { sessionId, principal: "bob", role: "controller" })).toEqual({ sessionId, principal: "bob", role: "controller" });
    expect(await bob.request("session/roles", { sessionId })).toEqual({
      sessionId,
      roles: [
        { principal: "alice", role: "owner" },
        { principal: "bob", role: "controller" },
      ],
      yourRole: "controller",
    });
    expect(await bob.request("session/abort", { sessionId })).toEqual({ aborted: true, sessionId });

    expect(await alice.request("session/setRole", { sessionId, principal: "bob", role: null })).toEqual({ sessionId, principal: "bob", role: null });
    expect(await rpcError(bob.request("session/abort", { sessionId }))).toMatchObject({ code: FORBIDDEN, message: expect.stringContaining("principal 'bob' is an observer") });

    // A controller made observer is refused too; the owner can be an observer of nothing: its creation stands.
    await alice.request("session/setRole", { sessionId, principal: "carol", role: "observer" });
    expect(await rpcError(carol.request("session/send", { sessionId, content: "Hi" }))).toMatchObject({ code: FORBIDDEN });
    expect((await alice.request("session/roles", { sessionId })).yourRole).toBe("owner");
  });
});

describe("Codex", () => {
  async function codex(who: keyof typeof TOKENS): Promise<CodexTestClient> {
    const client = await CodexTestClient.websocket(gw.wsUrl("/"), bearer(who));
    closers.push(() => client.socket.terminate());
    await client.initialize();
    return client;
  }

  it("refuses an observer's turn/start, turn/steer, turn/interrupt and a change of approvalPolicy; does not ask it; a demoted controller's answer decides nothing; a grant lets it act", async () => {
    const alice = await codex("alice");
    const bob = await codex("bob");
    const { thread } = await alice.request("thread/start", { cwd: gw.cwd, approvalPolicy: "on-request" });
    const threadId = thread.id as string;
    await bob.request("thread/resume", { threadId });

    const start = await bob.requestRaw("turn/start", { threadId, input: [{ type: "text", text: "Hi", text_elements: [] }] });
    expect(start.error).toMatchObject({ code: FORBIDDEN, message: "turn/start: principal 'bob' is an observer of this session; observers cannot prompt" });

    // An observer's approvalPolicy may restate the mode in force (a client's own default, sent unasked), not change it.
    expect((await bob.request("thread/resume", { threadId, approvalPolicy: "on-request" })).approvalPolicy).toBe("on-request");
    expect((await bob.requestRaw("thread/resume", { threadId, approvalPolicy: "never" })).error).toMatchObject({
      code: FORBIDDEN,
      message: "thread/resume: principal 'bob' is an observer of this session; observers cannot change the session's approval mode",
    });

    const carol = await codex("carol");
    await carol.request("thread/resume", { threadId });
    bob.onRequest("item/commandExecution/requestApproval", () => ({ decision: "accept" }));
    const carolAsked = deferred<void>();
    const demoted = deferred<void>();
    carol.onRequest("item/commandExecution/requestApproval", async () => {
      carolAsked.resolve();
      await demoted.promise;
      return { decision: "accept" };
    });
    const aliceAnswer = deferred<unknown>();
    alice.onRequest("item/commandExecution/requestApproval", () => aliceAnswer.promise);
    const { turn } = await alice.request("turn/start", { threadId, input: [{ type: "text", text: CALL_ECHO, text_elements: [] }] });
    await carolAsked.promise;
    // The observer is shown the command and the thread waiting on approval, and is not asked.
    await bob.waitFor((m) => m.method === "item/started" && m.params.item.type === "commandExecution");
    await bob.waitFor((m) => m.method === "thread/status/changed" && m.params.status.activeFlags?.includes("waitingOnApproval"));
    const owner = await ask("alice");
    await owner.request("session/setRole", { sessionId: threadId, principal: "carol", role: "observer" });
    demoted.resolve();
    await replyRefused("carol", "item/commandExecution/requestApproval");
    expect((await bob.requestRaw("turn/interrupt", { threadId, turnId: turn.id })).error).toMatchObject({ code: FORBIDDEN, message: expect.stringContaining("observers cannot interrupt") });
    expect((await bob.requestRaw("turn/steer", { threadId, expectedTurnId: turn.id, input: [{ type: "text", text: "x", text_elements: [] }] })).error).toMatchObject({
      code: FORBIDDEN,
      message: expect.stringContaining("observers cannot steer"),
    });
    // Nothing decided: the command has not run.
    expect(alice.notifications("item/completed").filter((m) => m.params.item.type === "commandExecution")).toEqual([]);
    aliceAnswer.resolve({ decision: "decline" });
    const completed = await alice.turnCompleted(turn.id);
    expect(completed.params.turn.status).toBe("completed");
    const command = alice.notifications("item/completed").find((m) => m.params.item.type === "commandExecution")!;
    expect(command.params.item.status).toBe("declined");
    await bob.turnCompleted(turn.id);
    expect(bob.serverRequests("item/commandExecution/requestApproval")).toEqual([]);

    await owner.request("session/setRole", { sessionId: threadId, principal: "bob", role: "controller" });
    const granted = await bob.request("turn/start", { threadId, input: [{ type: "text", text: "Hello", text_elements: [] }] });
    expect((await bob.turnCompleted(granted.turn.id)).params.turn.status).toBe("completed");
  });
  it("does not ask an observer the agent's question, live or as it resumes the thread; a controller's answer decides", async () => {
    const alice = await ask("alice");
    const sessionId = await aliceSession(alice);
    const bob = await codex("bob");
    bob.onRequest("item/tool/requestUserInput", (params) => ({ answers: { [params.questions[0].id]: { answers: ["red"] } } }));
    await bob.request("thread/resume", { threadId: sessionId });
    const { turnId } = await alice.request("session/send", { sessionId, content: '/tool ask_user {"question":"Which colour?","options":["red","blue"]}' });
    await alice.waitForEvent(sessionId, "input.requested");

    const bobAgain = await codex("bob");
    bobAgain.onRequest("item/tool/requestUserInput", (params) => ({ answers: { [params.questions[0].id]: { answers: ["red"] } } }));
    expect((await bobAgain.request("thread/resume", { threadId: sessionId, excludeTurns: true })).thread.status).toEqual({ type: "active", activeFlags: ["waitingOnUserInput"] });
    const carol = await codex("carol");
    carol.onRequest("item/tool/requestUserInput", (params) => ({ answers: { [params.questions[0].id]: { answers: ["blue"] } } }));
    await carol.request("thread/resume", { threadId: sessionId, excludeTurns: true });
    await carol.waitFor((m) => m.method === "item/tool/requestUserInput");

    expect(await waitForTerminal(alice, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    expect(payloadsOf(alice.eventsOf(sessionId), "input.resolved")).toEqual([expect.objectContaining({ response: "blue" })]);
    // Each request went out before carol's answer settled the question: neither of bob's connections was one of them.
    expect([...bob.serverRequests(), ...bobAgain.serverRequests()]).toEqual([]);
  });
});

describe("ACP", () => {
  async function acp(who: keyof typeof TOKENS): Promise<RawAcpClient> {
    const client = await RawAcpClient.connect(gw.wsUrl("/acp"), bearer(who));
    closers.push(() => client.close());
    await client.initialize();
    return client;
  }

  it("refuses an observer's session/prompt and session/set_mode; shows it the tool call without asking; a demoted controller's answer decides nothing; its cancel and close end nothing", async () => {
    const alice = await ask("alice");
    const sessionId = await aliceSession(alice);
    const bob = await acp("bob");
    await bob.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });
    const carol = await acp("carol");
    const carolAsked = deferred<any>();
    carol.answer = (request) => {
      carolAsked.resolve(request);
      return undefined;
    };
    await carol.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });

    const prompt = await bob.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Hi" }] });
    expect(prompt.error).toMatchObject({ code: FORBIDDEN, message: "session/prompt: principal 'bob' is an observer of this session; observers cannot prompt" });
    const setMode = await bob.request("session/set_mode", { sessionId, modeId: "auto" });
    expect(setMode.error).toMatchObject({ code: FORBIDDEN, message: "session/set_mode: principal 'bob' is an observer of this session; observers cannot change the session's approval mode" });
    // Restating the mode in force changes nothing, and is not refused (an editor re-applies its saved mode on load).
    expect((await bob.request("session/set_mode", { sessionId, modeId: "on_request" })).result).toEqual({});

    const { turnId } = await alice.request("session/send", { sessionId, content: CALL_ECHO });
    const request = await carolAsked.promise;
    // The observer sees the call waiting, and is not asked about it.
    const card = await bob.next((m) => m.params?.update?.sessionUpdate === "tool_call" && m.params.update.status === "pending");
    expect(card.params.update).toMatchObject({ toolCallId: request.params.toolCall.toolCallId, kind: "execute" });
    bob.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    await eventually(() => gw.bridgeLog().some((line) => line.includes("session/cancel refused") && line.includes("principal 'bob'")), "bob's session/cancel refused");

    await alice.request("session/setRole", { sessionId, principal: "carol", role: "observer" });
    carol.send({ jsonrpc: "2.0", id: request.id, result: { outcome: { outcome: "selected", optionId: request.params.options[0].optionId } } });
    await replyRefused("carol", "session/request_permission");
    expect(await pendingIds(alice, sessionId)).toEqual(["act_1"]);
    await alice.request("interaction/approve", { sessionId, interactionId: "act_1" });
    expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
    await bob.next((m) => m.params?.update?.sessionUpdate === "tool_call_update" && m.params.update.status === "completed");
    expect(bob.received.filter((m) => m.method === "session/request_permission")).toEqual([]);

    // Letting go is its own: an observer's session/close succeeds and the session goes on for the others.
    expect((await bob.request("session/close", { sessionId })).result).toEqual({});
    const next = await alice.request("session/send", { sessionId, content: "Still here" });
    expect(await waitForTerminal(alice, sessionId, next.turnId)).toMatchObject({ type: "turn.completed", payload: { response: "You said: Still here" } });

    const again = await acp("carol");
    await alice.request("session/setRole", { sessionId, principal: "carol", role: null });
    await again.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });
    const answered = await again.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Hello" }] });
    expect(answered.result).toEqual(expect.objectContaining({ stopReason: "end_turn" }));
  });
});

describe("MCP", () => {
  async function mcp(who: keyof typeof TOKENS, answer?: () => Promise<string>): Promise<{ client: Client; asked: Promise<void> }> {
    const client = sdkClient({ elicitation: answer !== undefined });
    const asked = deferred<void>();
    if (answer) {
      client.setRequestHandler(ElicitRequestSchema, async () => {
        asked.resolve();
        return { action: "accept", content: { decision: await answer() } };
      });
    }
    await client.connect(webSocketTransport(`${gw.wsUrl("/mcp/ws")}?access_token=${TOKENS[who]}`));
    closers.push(() => client.close().catch(() => undefined));
    return { client, asked: asked.promise };
  }

  /** Bob, an observer whose form would approve (shown: whether it was shown one), and carol, a controller whose form answers once demoted resolves. */
  async function observerAndController() {
    let shown = false;
    const { client: bob } = await mcp("bob", async () => {
      shown = true;
      return "approve";
    });
    const demoted = deferred<void>();
    const { client: carol, asked: carolAsked } = await mcp("carol", async () => {
      await demoted.promise;
      return "approve";
    });
    return { bob, bobShown: () => shown, carol, carolAsked, demoted };
  }

  it("an observer's tau-reply, tau-interrupt and tau-answer fail with the reason; it is shown no form; a demoted controller's form answer decides nothing", async () => {
    const alice = await ask("alice");
    const sessionId = await aliceSession(alice);
    const { bob, bobShown, carol, carolAsked, demoted } = await observerAndController();

    const reply = await bob.callTool({ name: "tau-reply", arguments: { sessionId, prompt: "Hi" } });
    expect(reply).toMatchObject({ isError: true, content: [{ type: "text", text: "tau-reply: principal 'bob' is an observer of this session; observers cannot prompt" }] });
    const interrupt = await bob.callTool({ name: "tau-interrupt", arguments: { sessionId } });
    expect(interrupt).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringContaining("observers cannot interrupt") }] });

    await bob.subscribeResource({ uri: `tau://session/${sessionId}` });
    await carol.subscribeResource({ uri: `tau://session/${sessionId}` });
    const { turnId } = await alice.request("session/send", { sessionId, content: CALL_ECHO });
    await carolAsked;
    const answer = await bob.callTool({ name: "tau-answer", arguments: { sessionId, action: "approve" } });
    expect(answer).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringContaining("observers cannot answer approvals or questions") }] });
    await alice.request("session/setRole", { sessionId, principal: "carol", role: "observer" });
    demoted.resolve();
    await replyRefused("carol", "elicitation/create");
    expect(await pendingIds(alice, sessionId)).toEqual(["act_1"]);

    await alice.request("interaction/approve", { sessionId, interactionId: "act_1" });
    expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
    expect(payloadsOf(alice.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
    // Every form went out before carol answered: the observer was shown none.
    expect(bobShown()).toBe(false);
  });
  it("lists tau-answer to a controller while the session waits for a decision, never to an observer", async () => {
    const alice = await ask("alice");
    const sessionId = await aliceSession(alice);
    const { client: bob } = await mcp("bob");
    const { client: carol } = await mcp("carol");
    for (const client of [bob, carol]) await client.subscribeResource({ uri: `tau://session/${sessionId}` });
    const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
    expect(await names(carol)).not.toContain("tau-answer");
    const carolsToolsChanged = deferred<void>();
    carol.setNotificationHandler(ToolListChangedNotificationSchema, () => carolsToolsChanged.resolve());
    const { turnId } = await alice.request("session/send", { sessionId, content: CALL_ECHO });
    // Both watches see the approval in the same event; the controller is offered the tool, the observer is not.
    await carolsToolsChanged.promise;
    expect(await names(carol)).toContain("tau-answer");
    expect(await names(bob)).toEqual(expect.arrayContaining(["tau", "tau-reply", "tau-sessions", "tau-history", "tau-interrupt"]));
    expect(await names(bob)).not.toContain("tau-answer");
    await alice.request("interaction/approve", { sessionId, interactionId: "act_1" });
    expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
  });
  it("puts a proposed plan to a controller's form and not an observer's; a demoted controller's answer decides nothing", async () => {
    const alice = await ask("alice");
    const sessionId = await aliceSession(alice);
    const { bob, bobShown, carol, carolAsked, demoted } = await observerAndController();
    await bob.subscribeResource({ uri: `tau://session/${sessionId}` });
    await carol.subscribeResource({ uri: `tau://session/${sessionId}` });

    const { turnId } = await alice.request("session/send", { sessionId, content: '/tool submit_plan {"plan":"- one step"}' });
    await carolAsked;
    await alice.request("session/setRole", { sessionId, principal: "carol", role: "observer" });
    demoted.resolve();
    await replyRefused("carol", "elicitation/create");
    expect(payloadsOf(alice.eventsOf(sessionId), "plan.approved")).toEqual([]);
    await alice.request("plan/approve", { sessionId });
    expect((await waitForTerminal(alice, sessionId, turnId)).type).toBe("turn.completed");
    expect(payloadsOf(alice.eventsOf(sessionId), "plan.approved")).toHaveLength(1);
    // The forms went out as the plan was proposed, before carol answered: none to the observer.
    expect(bobShown()).toBe(false);
  });
});

describe("the HTTP route /sessions/:id/roles", () => {
  const route = (sessionId: string, principal?: string) => `${gw.baseUrl}/sessions/${sessionId}/roles${principal ? `/${principal}` : ""}`;
  const call = async (who: keyof typeof TOKENS | undefined, method: string, url: string, body?: unknown) => {
    const response = await fetch(url, {
      method,
      headers: { ...(who ? bearer(who) : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("lets the owner and an operator grant, list and revoke; 403 for others; 404 for another tenant's session as for none", async () => {
    const alice = await ask("alice");
    const bob = await ask("bob");
    const sessionId = await aliceSession(alice, bob);

    expect(await call("alice", "PUT", route(sessionId, "bob"), { role: "controller" })).toEqual({ status: 200, body: { sessionId, principal: "bob", role: "controller" } });
    expect(await bob.request("session/abort", { sessionId })).toEqual({ aborted: true, sessionId });
    expect(await call("alice", "GET", route(sessionId))).toEqual({
      status: 200,
      body: { sessionId, roles: [{ principal: "alice", role: "owner" }, { principal: "bob", role: "controller" }] },
    });

    const carolRefused = await call("carol", "PUT", route(sessionId, "carol"), { role: "owner" });
    expect(carolRefused).toEqual({ status: 403, body: { error: "forbidden", message: expect.stringContaining("principal 'carol' is a controller of this session; controllers cannot grant or revoke roles") } });
    expect((await call("bob", "GET", route(sessionId))).status).toBe(403);

    const unknown = await call("dave", "GET", route("no-such-session"));
    const foreign = await call("dave", "GET", route(sessionId));
    expect(foreign).toEqual({ status: 404, body: { error: "session_not_found", message: `Session ${sessionId} not found` } });
    expect(unknown).toEqual({ status: 404, body: { error: "session_not_found", message: "Session no-such-session not found" } });
    expect((await call(undefined, "GET", route(sessionId))).status).toBe(401);
    expect(await call("alice", "PUT", route(sessionId, "bob"), { role: "admin" })).toMatchObject({ status: 400, body: { error: "invalid_role" } });

    expect(await call("ops", "DELETE", route(sessionId, "bob"))).toEqual({ status: 200, body: { sessionId, principal: "bob", role: null } });
    expect(await rpcError(bob.request("session/abort", { sessionId }))).toMatchObject({ code: FORBIDDEN });
  });
});
