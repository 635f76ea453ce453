import { describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import type { CommandToolConfig } from "../../../src/bridge/interactions/index.js";
import { rpcError, type AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway, type TestGatewayOptions } from "../../support/gateway.js";

/**
 * Interactions over `/rpc` (DESIGN §4.4), driven by the scripted agent calling the gateway's
 * client tools: a command tool behind approvals, ask_user and submit_plan, resolved by the
 * interaction/* and plan/* methods, by reverse requests, and by the deadline.
 */

const ECHO_JSON: CommandToolConfig = { name: "echo_json", description: "Echoes its JSON arguments.", parameters: { type: "object" }, command: "cat" };
const CALL_ECHO = '/tool echo_json {"a":1}';

const cleanups = cleanupsAfterEach();

const gateway = (options: TestGatewayOptions = {}) => cleanups.stopAfterTest(startTestGateway({ commandTools: [ECHO_JSON], ...options }));

/** Sends `content` and waits for the first event of `type` in the session. */
async function sendAndWaitFor(client: AskTestClient, sessionId: string, content: string, type: string): Promise<{ turnId: string; event: Event }> {
  const mark = client.eventsOf(sessionId).length;
  const { turnId } = await client.request("session/send", { sessionId, content });
  await client.waitFor(() => client.eventsOf(sessionId).slice(mark).some((e) => e.type === type), type);
  return { turnId, event: client.eventsOf(sessionId).slice(mark).find((e) => e.type === type)! };
}

/** The turn's tool result for the client tool and the turn's terminal event. */
async function outcome(client: AskTestClient, sessionId: string, turnId: string) {
  const terminal = await waitForTerminal(client, sessionId, turnId);
  const events = client.eventsOf(sessionId);
  const results = payloadsOf<{ name: string; output: string; isError: boolean }>(events, "tool.result");
  expectContiguous(events);
  expectOneTerminalPerTurn(events);
  expect(client.invalid).toEqual([]);
  return { terminal, result: results.at(-1)!, events };
}

describe("approvals of a command tool", () => {
  it("approve: approval.required, interaction/list, approval.updated, the command's output as the tool result", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const { turnId, event } = await sendAndWaitFor(client, sessionId, CALL_ECHO, "approval.required");
    expect(event.payload).toMatchObject({ id: "act_1", toolName: "echo_json", args: { a: 1 }, allowedScopes: ["once", "session"] });
    expect(await client.request("interaction/list", { sessionId })).toEqual({
      interactions: [{ id: "act_1", kind: "approval", status: "pending", payload: expect.objectContaining({ toolName: "echo_json" }) }],
    });

    expect(await client.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: true, interactionId: "act_1" });
    const { terminal, result, events } = await outcome(client, sessionId, turnId);
    expect(payloadsOf(events, "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
    expect(result).toMatchObject({ name: "echo_json", isError: false, output: '{"a":1}' });
    expect(terminal).toMatchObject({ type: "turn.completed", payload: { response: 'Tool echo_json returned: {"a":1}' } });

    // First resolution wins: later ones find nothing pending.
    expect((await rpcError(client.request("interaction/approve", { sessionId, interactionId: "act_1" }))).code).toBe(-32006);
    expect((await rpcError(client.request("interaction/reject", { sessionId, interactionId: "act_1" }))).code).toBe(-32006);
    expect(await client.request("interaction/list", { sessionId })).toEqual({ interactions: [] });
  });

  it("reject with feedback: the tool fails with it and the turn goes on", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const { turnId } = await sendAndWaitFor(client, sessionId, CALL_ECHO, "approval.required");
    expect(await client.request("interaction/reject", { sessionId, interactionId: "act_1", feedback: "not now" })).toEqual({ rejected: true, interactionId: "act_1" });
    const { terminal, result, events } = await outcome(client, sessionId, turnId);
    expect(payloadsOf(events, "approval.updated")).toEqual([{ id: "act_1", status: "rejected", feedback: "not now" }]);
    expect(result).toMatchObject({ name: "echo_json", isError: true });
    expect(result.output).toContain("not now");
    expect(terminal.type).toBe("turn.completed");
  });

  it("approve-all and reject-all resolve what is pending and count it", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    expect(await client.request("interaction/approve-all", { sessionId })).toEqual({ approved: 0 });
    expect(await client.request("interaction/reject-all", { sessionId })).toEqual({ rejected: 0 });

    // One turn, two calls: the agent makes them one after the other.
    const { turnId } = await sendAndWaitFor(client, sessionId, `${CALL_ECHO}\n/tool echo_json {"b":2}`, "approval.required");
    expect(await client.request("interaction/approve-all", { sessionId })).toEqual({ approved: 1 });
    await client.waitFor(() => payloadsOf(client.eventsOf(sessionId), "approval.required").length === 2, "the second approval");
    expect(await client.request("interaction/reject-all", { sessionId, feedback: "enough" })).toEqual({ rejected: 1 });
    const { events } = await outcome(client, sessionId, turnId);
    expect(payloadsOf(events, "approval.updated")).toEqual([
      { id: "act_1", status: "approved" },
      { id: "act_2", status: "rejected", feedback: "enough" },
    ]);
    expect(payloadsOf<{ isError: boolean; output: string }>(events, "tool.result").map((r) => [r.isError, r.output])).toEqual([
      [false, '{"a":1}'],
      [true, expect.stringContaining("enough")],
    ]);
  });

  it("scope session grants the tool for the rest of the session; scope project is refused and the approval stays pending", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const first = await sendAndWaitFor(client, sessionId, CALL_ECHO, "approval.required");
    const project = await rpcError(client.request("interaction/approve", { sessionId, interactionId: "act_1", scope: "project" }));
    expect(project.code).toBe(-32602);
    expect(project.message).toContain("project");
    expect((await client.request("interaction/list", { sessionId })).interactions).toHaveLength(1);

    await client.request("interaction/approve", { sessionId, interactionId: "act_1", scope: "session" });
    await outcome(client, sessionId, first.turnId);

    // The next call runs without asking; the grant still shows in the stream.
    const mark = client.eventsOf(sessionId).length;
    const { turnId } = await client.request("session/send", { sessionId, content: '/tool echo_json {"again":true}' });
    const { result, events } = await outcome(client, sessionId, turnId);
    const later = events.slice(mark);
    expect(later.some((e) => e.type === "approval.required")).toBe(false);
    expect(payloadsOf(later, "approval.updated")).toEqual([{ id: "act_2", status: "approved", scope: "session" }]);
    expect(result).toMatchObject({ isError: false, output: '{"again":true}' });
    expect(payloadsOf(events, "approval.updated")[0]).toEqual({ id: "act_1", status: "approved", scope: "session" });
  });

  it("the deadline denies (fail closed) with an expired approval.updated", async () => {
    const gw = await gateway({ interactionTimeoutMs: 200 });
    const client = await gw.client();
    const sessionId = await openSession(client);
    const { turnId } = await sendAndWaitFor(client, sessionId, CALL_ECHO, "approval.required");
    const { terminal, result, events } = await outcome(client, sessionId, turnId);
    expect(payloadsOf(events, "approval.updated")).toEqual([{ id: "act_1", status: "expired", reason: expect.stringContaining("200 ms") }]);
    expect(result).toMatchObject({ isError: true, output: expect.stringContaining("denied") });
    expect(terminal.type).toBe("turn.completed");
    expect((await rpcError(client.request("interaction/approve", { sessionId, interactionId: "act_1" }))).code).toBe(-32006);
  });

  it("modes: auto runs the tool without asking, plan refuses it until a plan is approved", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const auto = await openSession(client, { create: { mode: "auto" } });
    const ran = await client.request("session/send", { sessionId: auto, content: CALL_ECHO });
    const autoRun = await outcome(client, auto, ran.turnId);
    expect(autoRun.events.some((e) => e.type.startsWith("approval."))).toBe(false);
    expect(autoRun.result).toMatchObject({ isError: false, output: '{"a":1}' });

    const { session } = await client.request("session/create", { mode: "plan" });
    const plan: string = session.sessionId;
    await client.request("session/subscribe", { sessionId: plan });
    const refused = await client.request("session/send", { sessionId: plan, content: CALL_ECHO });
    expect((await outcome(client, plan, refused.turnId)).result).toMatchObject({ isError: true, output: expect.stringContaining("plan") });
    const proposed = await sendAndWaitFor(client, plan, '/tool submit_plan {"plan":"echo things"}', "plan.proposed");
    await client.request("plan/approve", { sessionId: plan });
    await outcome(client, plan, proposed.turnId);
    const asked = await sendAndWaitFor(client, plan, CALL_ECHO, "approval.required");
    await client.request("interaction/approve", { sessionId: plan, interactionId: (asked.event.payload as { id: string }).id });
    expect((await outcome(client, plan, asked.turnId)).result).toMatchObject({ isError: false });
    expect((await client.request("workspace/readState", { sessionId: plan })).workspace).toMatchObject({ mode: "require", path: gw.cwd });
    expect((await client.request("workspace/readState", { sessionId: auto })).workspace).toMatchObject({ mode: "auto" });
  });
});

describe("user input", () => {
  it("ask_user answered with interaction/respond", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const { turnId, event } = await sendAndWaitFor(client, sessionId, '/tool ask_user {"question":"Name?"}', "input.requested");
    expect(event.payload).toEqual({ id: "input_1", prompt: "Name?" });
    expect(await client.request("interaction/list", { sessionId })).toEqual({
      interactions: [{ id: "input_1", kind: "user_input", status: "pending", payload: { prompt: "Name?" } }],
    });
    expect((await rpcError(client.request("interaction/approve", { sessionId, interactionId: "input_1" }))).code).toBe(-32006);
    expect(await client.request("interaction/respond", { sessionId, interactionId: "input_1", response: "Ada" })).toEqual({ responded: true, interactionId: "input_1" });
    const { terminal, result, events } = await outcome(client, sessionId, turnId);
    expect(payloadsOf(events, "input.resolved")).toEqual([{ id: "input_1", status: "responded", response: "Ada" }]);
    expect(result).toMatchObject({ name: "ask_user", isError: false, output: "Ada" });
    expect(terminal).toMatchObject({ type: "turn.completed", payload: { response: "Tool ask_user returned: Ada" } });
    expect((await rpcError(client.request("interaction/respond", { sessionId, interactionId: "input_1", response: "again" }))).code).toBe(-32006);
  });

  it("ask_user answered by an interaction/requestUserInput reverse request to the client that opted in", async () => {
    const gw = await gateway();
    const plain = await gw.client();
    const answering = await gw.client();
    const sessionId = await openSession(plain);
    const asked: Array<[string, Record<string, unknown>]> = [];
    plain.reverse = (method, params) => {
      asked.push([method, params]);
      return { response: "from the client that never opted in" };
    };
    answering.reverse = (method, params) => {
      asked.push([method, params]);
      return { response: "Grace" };
    };
    await answering.request("initialize", { capabilities: ["reverseRequests"] });
    await answering.request("session/subscribe", { sessionId, deliveryKind: "live" });

    const { turnId } = await plain.request("session/send", { sessionId, content: '/tool ask_user {"question":"Name?","options":["Ada","Grace"]}' });
    const { result, events } = await outcome(plain, sessionId, turnId);
    expect(asked).toEqual([["interaction/requestUserInput", expect.objectContaining({ requestId: "input_1", prompt: "Name?", options: ["Ada", "Grace"], sessionId, interactionId: "input_1" })]]);
    expect(payloadsOf(events, "input.resolved")).toEqual([{ id: "input_1", status: "responded", response: "Grace" }]);
    expect(result).toMatchObject({ output: "Grace", isError: false });
    expect(answering.invalid).toEqual([]);
  });
});

describe("interaction/requestPermission reverse requests", () => {
  for (const [decision, status, isError] of [
    ["allow", "approved", false],
    ["deny", "rejected", true],
    ["maybe-later", "rejected", true],
  ] as const) {
    it(`decision ${JSON.stringify(decision)} → ${status}`, async () => {
      const gw = await gateway();
      const client = await gw.client();
      const requests: Array<Record<string, unknown>> = [];
      client.reverse = (method, params) => {
        expect(method).toBe("interaction/requestPermission");
        requests.push(params);
        return { decision };
      };
      const sessionId = await openSession(client, { capabilities: ["reverseRequests"] });
      const { turnId } = await client.request("session/send", { sessionId, content: CALL_ECHO });
      const { result, events } = await outcome(client, sessionId, turnId);
      expect(requests).toEqual([expect.objectContaining({ requestId: "act_1", toolName: "echo_json", input: { a: 1 }, sessionId, interactionId: "act_1" })]);
      expect(payloadsOf(events, "approval.updated")).toEqual([expect.objectContaining({ id: "act_1", status })]);
      expect(result.isError).toBe(isError);
      if (!isError) expect(result.output).toBe('{"a":1}');
    });
  }
});

describe("plans", () => {
  it("plan/approve: plan.proposed, plan.approved, the tool result says so; plans are not listed", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    expect((await rpcError(client.request("plan/approve", { sessionId }))).code).toBe(-32007);
    const { turnId, event } = await sendAndWaitFor(client, sessionId, '/tool submit_plan {"plan":"do it"}', "plan.proposed");
    expect(event.payload).toEqual({ id: "plan_1", plan: "do it" });
    expect(await client.request("interaction/list", { sessionId })).toEqual({ interactions: [] });
    expect(await client.request("plan/approve", { sessionId })).toEqual({ approved: true });
    const { result, events } = await outcome(client, sessionId, turnId);
    expect(payloadsOf(events, "plan.approved")).toEqual([{ id: "plan_1", plan: "do it" }]);
    expect(result).toMatchObject({ name: "submit_plan", isError: false, output: expect.stringContaining("approved") });
    expect((await rpcError(client.request("plan/reject", { sessionId }))).code).toBe(-32007);
  });

  it("plan/reject with feedback", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const { turnId } = await sendAndWaitFor(client, sessionId, '/tool submit_plan {"plan":"do it"}', "plan.proposed");
    expect(await client.request("plan/reject", { sessionId, feedback: "smaller steps" })).toEqual({ rejected: true });
    const { result, events } = await outcome(client, sessionId, turnId);
    expect(payloadsOf(events, "plan.rejected")).toEqual([{ id: "plan_1", plan: "do it", feedback: "smaller steps" }]);
    expect(result.output).toContain("rejected");
    expect(result.output).toContain("smaller steps");
  });
});

describe("interactions and the session's end", () => {
  it("abort while an approval is pending cancels it with an event, and the turn ends aborted", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const { turnId } = await sendAndWaitFor(client, sessionId, CALL_ECHO, "approval.required");
    await client.request("session/abort", { sessionId });
    const { terminal, events } = await outcome(client, sessionId, turnId);
    expect(terminal.type).toBe("turn.aborted");
    await client.waitFor(() => payloadsOf(client.eventsOf(sessionId), "approval.updated").length === 1, "the cancelled approval");
    expect(payloadsOf(client.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "cancelled", reason: expect.any(String) }]);
    expect(events.some((e) => e.type === "tool.result")).toBe(true);
    expect(await client.request("interaction/list", { sessionId })).toEqual({ interactions: [] });
  });
});
