import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import type { SequencedFrame } from "../../../src/gateway/inspector/inspector-hub.js";
import { waitForTerminal } from "../../support/ask-events.js";
import { TauTestClient } from "../../support/tau-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { readDoc } from "../../support/docs.js";
import { ECHO_TOOL, sharedSession, startInspectorGateway, type InspectorGateway } from "../../support/inspector-gateway.js";

/**
 * The inspector's session API over real sockets: one session used by an Ask client and a Codex
 * client at once, each frame the gateway sends naming the session event (or the interaction) it
 * was sent for; the session's events and pending approvals; an operator's answer through the
 * normal decision path, which withdraws every client's prompt; and every refusal, worded.
 */

const cleanups = cleanupsAfterEach();

/** A request to the inspector as its own page makes it (loopback, Host and Origin of the page). */
async function api(gw: InspectorGateway, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string>; origin?: string | null } = {}) {
  const origin = init.origin === undefined ? gw.baseUrl : init.origin;
  const headers: Record<string, string> = { ...(origin === null ? {} : { origin }), ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers };
  const response = await fetch(`${gw.baseUrl}${path}`, { method: init.method ?? "GET", headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  return { status: response.status, body: (await response.json()) as any };
}

async function csrfHeaders(gw: InspectorGateway, headers: Record<string, string> = {}) {
  const { body } = await api(gw, "/inspector/api/csrf", { headers });
  return { ...headers, [body.header]: body.token };
}

const serverFrames = (gw: InspectorGateway, connection: string): SequencedFrame[] => gw.hub.snapshot().frames.filter((f) => f.connection === connection && f.direction === "server");

describe("one session across dialects", () => {
  it("lists the session and its events; every frame sent because of an event names it, in both dialects", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ commandTools: [ECHO_TOOL] }));
    const s = await sharedSession(gw, cleanups);
    // A Tau client observes the session on its own upstream connection.
    const tau = await TauTestClient.connect(gw.wsUrl("/tau"));
    cleanups.push(() => tau.close());
    await tau.initialize();
    await tau.request("session.observe", { sessionId: s.sessionId });
    await s.turn("hello from ask");
    await s.codex.waitFor((m) => m.method === "turn/completed");
    await tau.waitFor((m) => m.type === "session.delta" && JSON.stringify(m).includes('"settled"'), "the turn to settle on the Tau connection");

    const { body: list } = await api(gw, "/inspector/api/sessions");
    expect(list.sessions).toEqual([expect.objectContaining({ sessionId: s.sessionId, running: false })]);
    const { status, body: view } = await api(gw, `/inspector/api/sessions/${s.sessionId}`);
    expect(status).toBe(200);
    // The streamed reply is one event or a few (chunks arriving in one tick are merged).
    const types = view.events.map((e: { type: string }) => e.type);
    expect(types.filter((t: string) => t !== "model.streaming")).toEqual(["session.created", "turn.started", "user.message", "turn.completed"]);
    expect(types).toContain("model.streaming");
    expect(view.pending).toEqual([]);
    const started = view.events.find((e: { type: string }) => e.type === "turn.started");
    const completed = view.events.find((e: { type: string }) => e.type === "turn.completed");

    const [ask, codex] = [...new Set(gw.hub.snapshot().frames.map((f) => f.connection))].filter((c) => !c.startsWith("tau-"));
    const causedBy = (connection: string, seq: number) => serverFrames(gw, connection).filter((f) => f.cause?.seq === seq && f.cause.sessionId === s.sessionId);
    expect(causedBy(ask!, started.seq).map((f) => f.method)).toEqual(["session/event"]);
    expect(causedBy(codex!, started.seq).map((f) => f.method)).toContain("turn/started");
    expect(causedBy(codex!, completed.seq).map((f) => f.method)).toContain("turn/completed");
    // The Tau deltas each event came from: the /tau client got those very deltas.
    expect(started.tau).toEqual({ from: expect.any(Number), to: started.tau.from });
    expect(completed.tau.from).toBeGreaterThan(started.tau.to);
    const tauRevisions = tau.messagesOf("session.delta", s.sessionId).map((m) => m.toRevision);
    expect(tauRevisions).toContain(started.tau.from);
    expect(tauRevisions).toContain(completed.tau.from);
    // Answers are caused by requests, not by events.
    expect(serverFrames(gw, codex!).filter((f) => f.kind === "response").every((f) => f.cause === undefined)).toBe(true);

    // Later events only.
    const { body: after } = await api(gw, `/inspector/api/sessions/${s.sessionId}?after=${started.seq}`);
    expect(after.events.map((e: { seq: number }) => e.seq)).toEqual(view.events.filter((e: { seq: number }) => e.seq > started.seq).map((e: { seq: number }) => e.seq));
    expect(after.events[0].seq).toBe(started.seq + 1);
  });

  it("shows the session's sub-agents: title, state with the answer or why, tokens and cost, what each did", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const s = await sharedSession(gw, cleanups);
    await s.turn("/subagent docs read the docs\n/subagent-fail broken it broke");
    const { body: view } = await api(gw, `/inspector/api/sessions/${s.sessionId}`);
    expect(view.subagents).toEqual([
      expect.objectContaining({ title: "docs", model: "scripted-1", state: "succeeded", response: "Done: read the docs", inputTokens: 4, outputTokens: 4, activityCount: 2, recentActivities: ["read: Read read the docs (succeeded)", "Done: read the docs"] }),
      expect.objectContaining({ title: "broken", state: "failed", error: "it broke", activityCount: 2, recentActivities: ["read: Read it broke (succeeded)", "error: it broke"] }),
    ]);
    expect(view.subagents[0].cost).toBeCloseTo(8e-6, 12);
    expect(view.events.map((e: { type: string }) => e.type)).toContain("subagent.completed");
  });

  it("answers an unknown session and a bad cursor with clear errors", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    expect(await api(gw, "/inspector/api/sessions/nope")).toEqual({ status: 404, body: { error: "not_found", message: expect.stringContaining('no session "nope" is open') } });
    const s = await sharedSession(gw, cleanups);
    expect(await api(gw, `/inspector/api/sessions/${s.sessionId}?after=-1`)).toEqual({ status: 400, body: { error: "invalid_request", message: 'after must be an event seq (a whole number), got "-1"' } });
  });
});

describe("approvals answered from the inspector", () => {
  it("shows who was asked, takes the operator's answer through the normal decision path, and withdraws every client's prompt", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ commandTools: [ECHO_TOOL] }));
    const s = await sharedSession(gw, cleanups);
    const { turnId } = await s.callTool(7);

    const { body: view } = await api(gw, `/inspector/api/sessions/${s.sessionId}`);
    expect(view.pending).toEqual([expect.objectContaining({ id: "act_1", kind: "approval", payload: expect.objectContaining({ toolName: ECHO_TOOL.name, args: { a: 7 } }) })]);
    const [ask, codex] = [...new Set(gw.hub.snapshot().frames.map((f) => f.connection))];
    const asked = (connection: string) => serverFrames(gw, connection).filter((f) => f.cause?.interactionId === "act_1" && f.kind === "request").map((f) => f.method);
    expect(asked(ask!)).toEqual(["interaction/requestPermission"]);
    expect(asked(codex!)).toEqual(["item/commandExecution/requestApproval"]);

    const headers = await csrfHeaders(gw);
    const path = `/inspector/api/sessions/${s.sessionId}/interactions/act_1`;
    const answered = await api(gw, path, { method: "POST", body: { action: "approve", scope: "once" }, headers });
    expect(answered).toEqual({ status: 200, body: { decided: true, decision: expect.objectContaining({ sessionId: s.sessionId, interactionId: "act_1", action: "approve", scope: "once", by: "loopback" }) } });

    // The command ran: its output (the arguments, as JSON) is the tool's result, and the turn ends.
    expect((await waitForTerminal(s.ask, s.sessionId, turnId)).type).toBe("turn.completed");
    const results = s.ask.eventsOf(s.sessionId).filter((e) => e.type === "tool.result");
    expect(results).toEqual([expect.objectContaining({ payload: expect.objectContaining({ name: ECHO_TOOL.name, isError: false, output: expect.stringContaining('{"a":7}') }) })]);
    expect(s.ask.eventsOf(s.sessionId).filter((e) => e.type === "approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: "approved" }]);
    // The Codex client's prompt is withdrawn in its words, and that notice names the interaction too.
    const [request] = s.codex.serverRequests("item/commandExecution/requestApproval");
    await s.codex.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === request!.id);
    expect(serverFrames(gw, codex!).filter((f) => f.method === "serverRequest/resolved").map((f) => f.cause)).toEqual([{ sessionId: s.sessionId, interactionId: "act_1" }]);
    // The page hears the decision; a second answer finds nothing pending.
    expect(gw.hub.snapshot().decisions).toEqual([answered.body.decision]);
    expect(await api(gw, path, { method: "POST", body: { action: "reject" }, headers })).toEqual({ status: 409, body: { error: "not_pending", message: "no pending approval act_1" } });
  });

  it("an editor (ACP) attached too: its updates join the timeline, it is asked, and its request is withdrawn", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ commandTools: [ECHO_TOOL] }));
    const s = await sharedSession(gw, cleanups, { acp: true });
    const { turnId } = await s.callTool(3);
    const acp = gw.hub.snapshot().connections.find((c) => c.dialect === "acp")!.id;
    const { body: view } = await api(gw, `/inspector/api/sessions/${s.sessionId}`);
    const seqOf = (type: string) => view.events.find((e: { type: string }) => e.type === type).seq;
    const acpFrames = () => serverFrames(gw, acp);
    // ACP has no turn start: the tool call is its first word of the turn.
    expect(acpFrames().filter((f) => f.cause?.seq === seqOf("tool.use")).map((f) => f.method)).toEqual(["session/update"]);
    expect(acpFrames().filter((f) => f.kind === "request" && f.cause?.seq === seqOf("approval.required")).map((f) => f.method)).toEqual(["session/request_permission"]);

    const headers = await csrfHeaders(gw);
    expect((await api(gw, `/inspector/api/sessions/${s.sessionId}/interactions/act_1`, { method: "POST", body: { action: "reject", feedback: "not now" }, headers })).status).toBe(200);
    expect((await waitForTerminal(s.ask, s.sessionId, turnId)).type).toBe("turn.completed");
    expect(s.ask.eventsOf(s.sessionId).filter((e) => e.type === "approval.updated").map((e) => e.payload)).toEqual([{ id: "act_1", status: "rejected", feedback: "not now" }]);
    const [permission] = s.acp!.received.filter((m) => m.method === "session/request_permission");
    await s.acp!.next((m) => m.method === "$/cancel_request" && m.params.requestId === permission.id);
    const { body: after } = await api(gw, `/inspector/api/sessions/${s.sessionId}`);
    const cancel = acpFrames().find((f) => f.method === "$/cancel_request")!;
    // ACP withdraws it as it translates the outcome event.
    expect(cancel.cause).toEqual({ sessionId: s.sessionId, seq: after.events.find((e: { type: string }) => e.type === "approval.updated").seq, type: "approval.updated" });
  });

  it("answers a question (ask_user) from the page: the answer is the tool's result", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const s = await sharedSession(gw, cleanups);
    const sent = await s.ask.request("session/send", { sessionId: s.sessionId, content: '/tool ask_user {"question":"Pick a colour","options":["Red","Blue"]}' });
    await s.ask.waitFor(() => s.askAsked.length > 0, "the Ask client to be asked");
    expect(s.askAsked).toEqual([expect.stringMatching(/^interaction\/requestUserInput /)]);
    const { body: view } = await api(gw, `/inspector/api/sessions/${s.sessionId}`);
    const [question] = view.pending;
    expect(question).toMatchObject({ kind: "user_input", payload: { prompt: "Pick a colour", options: ["Red", "Blue"] } });

    const headers = await csrfHeaders(gw);
    const path = `/inspector/api/sessions/${s.sessionId}/interactions/${question.id}`;
    expect(await api(gw, path, { method: "POST", body: { action: "approve" }, headers })).toEqual({ status: 409, body: { error: "not_pending", message: `no pending approval ${question.id}` } });
    expect((await api(gw, path, { method: "POST", body: { action: "respond", response: "Blue" }, headers })).status).toBe(200);
    expect((await waitForTerminal(s.ask, s.sessionId, sent.turnId)).type).toBe("turn.completed");
    const events = s.ask.eventsOf(s.sessionId);
    expect(events.filter((e) => e.type === "input.resolved").map((e) => e.payload)).toEqual([expect.objectContaining({ id: question.id, status: "responded", response: "Blue" })]);
    expect(events.filter((e) => e.type === "tool.result").map((e) => e.payload)).toEqual([expect.objectContaining({ name: "ask_user", isError: false, output: expect.stringContaining("Blue") })]);
  });

  it("approves a plan (submit_plan) from the page: listed with its text, refused a scope or an answer, decided once", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway());
    const s = await sharedSession(gw, cleanups);
    const sent = await s.ask.request("session/send", { sessionId: s.sessionId, content: '/tool submit_plan {"plan":"- read the code\\n- write the test"}' });
    const proposed = await s.ask.waitForEvent(s.sessionId, "plan.proposed");
    const planId = (proposed.payload as { id: string }).id;
    const codexAsked = await s.codex.waitFor((m) => m.method === "item/tool/requestUserInput");
    const { body: view } = await api(gw, `/inspector/api/sessions/${s.sessionId}`);
    expect(view.plans).toEqual([{ id: planId, plan: "- read the code\n- write the test" }]);
    expect(view.pending).toEqual([]);

    const headers = await csrfHeaders(gw);
    const path = `/inspector/api/sessions/${s.sessionId}/interactions/${planId}`;
    const post = (body: unknown) => api(gw, path, { method: "POST", body, headers });
    expect(await post({ action: "approve", scope: "session" })).toEqual({
      status: 400,
      body: { error: "invalid_request", message: `a plan is approved (without a scope) or rejected; "approve" with scope "session" does not apply to ${planId}` },
    });
    expect(await post({ action: "respond", response: "yes" })).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    expect(await post({ action: "approve" })).toMatchObject({ status: 200, body: { decided: true, decision: { interactionId: planId, action: "approve" } } });
    expect(await post({ action: "reject" })).toEqual({ status: 409, body: { error: "not_pending", message: `no pending plan ${planId}` } });

    expect((await waitForTerminal(s.ask, s.sessionId, sent.turnId)).type).toBe("turn.completed");
    const events = s.ask.eventsOf(s.sessionId);
    expect(events.filter((e) => e.type === "plan.approved").map((e) => e.payload)).toEqual([expect.objectContaining({ id: planId })]);
    expect(events.filter((e) => e.type === "tool.result").map((e) => e.payload)).toEqual([expect.objectContaining({ name: "submit_plan", isError: false, output: expect.stringContaining("approved") })]);
    // The Codex client's question is withdrawn.
    await s.codex.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === codexAsked.id);
    expect((await api(gw, `/inspector/api/sessions/${s.sessionId}`)).body.plans).toEqual([]);
    // As docs/inspector.md says.
    expect(readDoc("inspector.md").replace(/\s+/g, " ")).toContain("Pending plans (`submit_plan`) are listed apart, in the session's `plans` (`[{id, plan}]`, beside `pending`), and answered at the same path with `{\"action\":\"approve\"}` (no scope)");
  });

  it("refuses what a page of another site could send, and bad input, each with a clear error", async () => {
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ commandTools: [ECHO_TOOL] }));
    const s = await sharedSession(gw, cleanups);
    await s.callTool(1);
    const path = `/inspector/api/sessions/${s.sessionId}/interactions/act_1`;
    const headers = await csrfHeaders(gw);
    const post = (body: unknown, over: { headers?: Record<string, string>; origin?: string | null } = {}) => api(gw, path, { method: "POST", body, headers: over.headers ?? headers, origin: over.origin });

    expect(await post({ action: "approve" }, { origin: null })).toMatchObject({ status: 403, body: { error: "forbidden_origin", message: expect.stringContaining("no Origin header") } });
    expect(await post({ action: "approve" }, { origin: "http://evil.example" })).toMatchObject({ status: 403, body: { error: "forbidden_origin" } });
    expect(await post({ action: "approve" }, { headers: {} })).toMatchObject({ status: 403, body: { error: "bad_csrf_token", message: expect.stringContaining("x-inspector-csrf") } });
    expect(await post({ action: "approve" }, { headers: { "x-inspector-csrf": "guess" } })).toMatchObject({ status: 403, body: { error: "bad_csrf_token" } });
    expect(await post({ action: "maybe" })).toEqual({ status: 400, body: { error: "invalid_request", message: "body/action must be equal to one of the allowed values" } });
    expect(await post({})).toEqual({ status: 400, body: { error: "invalid_request", message: "body must have required property 'action'" } });
    expect(await post({ action: "approve", response: "yes" })).toEqual({ status: 400, body: { error: "invalid_request", message: 'body/response does not go with action "approve" (it takes scope)' } });
    expect(await post({ action: "respond" })).toEqual({ status: 400, body: { error: "invalid_request", message: 'body/response is required with action "respond"' } });
    expect(await post({ action: "approve", scope: "project" })).toEqual({ status: 400, body: { error: "invalid_request", message: expect.stringContaining('scope "project" is not supported') } });
    expect(await post({ action: "respond", response: "Blue" })).toEqual({ status: 409, body: { error: "not_pending", message: "no pending user-input request act_1" } });
    expect(await api(gw, `/inspector/api/sessions/${s.sessionId}/interactions/act_9`, { method: "POST", body: { action: "approve" }, headers })).toEqual({
      status: 409,
      body: { error: "not_pending", message: "no pending approval act_9" },
    });
    expect(await api(gw, `/inspector/api/sessions/nope/interactions/act_1`, { method: "POST", body: { action: "approve" }, headers })).toMatchObject({ status: 404, body: { error: "not_found" } });
    const notJson = await fetch(`${gw.baseUrl}${path}`, { method: "POST", headers: { ...headers, origin: gw.baseUrl, "content-type": "text/plain" }, body: "action=approve" });
    // What an HTML form could send is not JSON: refused.
    expect({ status: notJson.status, body: await notJson.json() }).toEqual({ status: 400, body: { error: "invalid_request", message: "body must be object" } });
    // Nothing was decided: the approval still waits.
    expect((await api(gw, `/inspector/api/sessions/${s.sessionId}`)).body.pending).toEqual([expect.objectContaining({ id: "act_1" })]);
  });

  it("with tokens, answers only an operator: a tenant's token sees its own sessions (none here) and may not answer", async () => {
    const tokens = TokenRegistry.parse(JSON.stringify([{ id: "ops", token: "op-token", tenant: "ops", operator: true }, { id: "a", token: "tenant-token", tenant: "a" }]), "tokens.json");
    const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens }));
    const tenant = { authorization: "Bearer tenant-token" };
    expect(await api(gw, "/inspector/api/sessions", { headers: tenant })).toEqual({ status: 200, body: { sessions: [] } });
    expect(await api(gw, "/inspector/api/sessions/x", { headers: tenant })).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await api(gw, "/inspector/api/csrf", { headers: tenant })).toMatchObject({ status: 403, body: { error: "not_operator" } });
    expect(await api(gw, "/inspector/api/sessions/x/interactions/act_1", { method: "POST", body: { action: "approve" }, headers: tenant })).toMatchObject({ status: 403, body: { error: "not_operator" } });
    expect(await api(gw, "/inspector/api/sessions")).toMatchObject({ status: 401 });
    const operator = await csrfHeaders(gw, { authorization: "Bearer op-token" });
    expect(await api(gw, "/inspector/api/sessions", { headers: operator })).toEqual({ status: 200, body: { sessions: [] } });
    expect(await api(gw, "/inspector/api/sessions/x/interactions/act_1", { method: "POST", body: { action: "approve" }, headers: operator })).toMatchObject({ status: 404, body: { error: "not_found" } });
  });
});
