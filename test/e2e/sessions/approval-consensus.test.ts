import { describe, expect, it } from "vitest";
import * as acp from "@agentclientprotocol/sdk";
import { AcpSdkEditor } from "../../support/acp-sdk-editor.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { eventually, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { deferred } from "../../support/echo-tool.js";
import { policyGatewayForFile } from "../../support/policy-gateway.js";
import { auditedReceipts } from "../../support/audit-file.js";
import { sdkClient, webSocketTransport } from "../../support/mcp-client.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * A policy's `require` rules as the live flow holds to them, over real sockets with principals
 * from a tokens file: a consensus needs two distinct approvers (an Ask client's and an ACP
 * editor's, the official ACP SDK client; the first is only a vote, and every vote is in the audit with the digest of what ran);
 * a rule naming its deciders is decided by them and by no other controller; and a deadline decides
 * by its rule when nobody does, and the turn goes on.
 */

const POLICY = `version: consensus-1
rules:
  - name: two-of-us
    match: { tool: echo-json, arguments: { /a: "2" } }
    action: require
    approvers: { principals: [ann, ben] }
    count: 2
  - name: leads-decide
    match: { tool: echo-json, arguments: { /a: "3" } }
    action: require
    approvers: { principals: [lead] }
  - name: quick
    match: { tool: echo-json, arguments: { /a: "4" } }
    action: require
    approvers: { principals: [lead] }
    deadline: 1
    onDeadline: deny
`;

const TOKENS = { ann: "tok-ann-consensus-1", ben: "tok-ben-consensus-2", lead: "tok-lead-consensus-3", dev: "tok-dev-consensus-4" };
type Who = keyof typeof TOKENS;
const bearer = (who: Who) => ({ authorization: `Bearer ${TOKENS[who]}` });
const FORBIDDEN = -32011;

const suite = policyGatewayForFile(TOKENS, POLICY, "approval-consensus-");
const { auditDir, closers } = suite;

async function ask(who: Who, capabilities?: string[]): Promise<AskTestClient> {
  const client = await AskTestClient.websocket(suite.gw.wsUrl("/rpc"), { headers: bearer(who) });
  closers.push(() => client.socket.terminate());
  await client.request("initialize", { client: { name: `consensus-${who}`, version: "1" }, ...(capabilities ? { capabilities } : {}) });
  return client;
}

/** A session `owner` created, subscribed by each client given. */
async function sessionOf(owner: AskTestClient, ...watchers: AskTestClient[]): Promise<string> {
  const { session } = await owner.request("session/create", {});
  for (const client of [owner, ...watchers]) await client.request("session/subscribe", { sessionId: session.sessionId });
  return session.sessionId as string;
}

const audited = (sessionId: string) => auditedReceipts(suite.gw, auditDir, sessionId);

const steps = (receipt: { steps: Array<Record<string, unknown>> }) => receipt.steps.map(({ at: _at, ...step }) => step);
const logged = (text: string) => eventually(() => suite.gw.bridgeLog().some((line) => line.includes(text)), text);
const pendingIds = async (client: AskTestClient, sessionId: string) => ((await client.request("interaction/list", { sessionId })).interactions as Array<{ id: string }>).map((i) => i.id);

describe("a consensus rule (count 2)", () => {
  it("needs an Ask approver and an ACP approver: the first answer is a vote, the second decides; the audit lists both votes and the digest that ran", async () => {
    const ann = await ask("ann", ["reverseRequests"]);
    const annAsked = deferred<void>();
    ann.reverse = async () => {
      annAsked.resolve();
      return { decision: "allow_once" };
    };
    const sessionId = await sessionOf(ann);
    // Ben's editor is built with the official ACP SDK, on the gateway's /acp WebSocket.
    const ben = AcpSdkEditor.open(suite.gw.wsUrl("/acp"), bearer("ben"), "consensus-ben");
    closers.push(() => ben.close());
    await ben.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
    await ben.agent.request(acp.methods.agent.session.load, { sessionId, cwd: suite.gw.cwd, mcpServers: [] });

    const { turnId } = await ann.request("session/send", { sessionId, content: '/tool echo-json {"a":2}\nDone' });
    const [benAsked] = await Promise.all([ben.permission(), annAsked.promise]);
    await logged("approval vote counted: ann approves act_1 (1 of 2)");
    // The vote is told as a vote: every client sees approval.voted, and the ACP card, still pending, says how many approved.
    expect((await ann.waitForEvent(sessionId, "approval.voted")).payload).toEqual({ id: "act_1", approver: "ann", approvals: 1, needed: 2 });
    const { toolCallId } = benAsked.params.toolCall;
    const card = await ben.update((update) => update.sessionUpdate === "tool_call_update" && update.toolCallId === toolCallId);
    expect(card).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "pending",
      content: [{ type: "content", content: { type: "text", text: "Approved by 1 of 2 needed approvers (latest: ann); waiting for 1 more." } }],
    });
    // One approver alone decides nothing: still pending, nobody told it was decided, nothing ran.
    expect(await pendingIds(ann, sessionId)).toEqual(["act_1"]);
    expect(payloadsOf(ann.eventsOf(sessionId), "approval.updated")).toEqual([]);
    expect(payloadsOf(ann.eventsOf(sessionId), "tool.result")).toEqual([]);

    const allowOnce = benAsked.params.options.find((option) => option.kind === "allow_once")!.optionId;
    benAsked.answer({ outcome: { outcome: "selected", optionId: allowOnce } });
    expect((await waitForTerminal(ann, sessionId, turnId)).type).toBe("turn.completed");
    expect(payloadsOf(ann.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
    expect(payloadsOf(ann.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ isError: false, output: '{"a":2}' })]);

    const [receipt, ...more] = await audited(sessionId);
    expect(more).toEqual([]);
    expect(receipt).toMatchObject({ rule: { name: "two-of-us", index: 0 }, policyVersion: "consensus-1", interactionId: "act_1", digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(steps(receipt)).toEqual([
      { step: "proposed" },
      { step: "asked", whom: "the session's clients; decided by principals ann, ben, 2 distinct approvers" },
      { step: "vote", approver: "ann", approve: true },
      { step: "vote", approver: "ben", approve: true },
      { step: "decided", by: "client", outcome: "approved", detail: "once", approvers: ["ann", "ben"] },
      { step: "executed", digest: receipt.digest },
      { step: "returned", ok: true },
    ]);
  });
});

describe("a vote given with interaction/approve", () => {
  it("is answered as a vote with its count (approved: false), not as the decision; the vote that reaches the count is answered approved: true", async () => {
    const ann = await ask("ann");
    const ben = await ask("ben");
    const sessionId = await sessionOf(ann, ben);
    const { turnId } = await ann.request("session/send", { sessionId, content: '/tool echo-json {"a":2}\nDone' });
    await ann.waitForEvent(sessionId, "approval.required");
    expect(await ann.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: false, interactionId: "act_1", vote: { approvals: 1, needed: 2 } });
    // Told to every client, the voter's own included; the approval is still pending.
    expect((await ben.waitForEvent(sessionId, "approval.voted")).payload).toEqual({ id: "act_1", approver: "ann", approvals: 1, needed: 2 });
    expect(await pendingIds(ben, sessionId)).toEqual(["act_1"]);
    // The same principal again is the same vote: still one of two.
    expect(await ann.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: false, interactionId: "act_1", vote: { approvals: 1, needed: 2 } });
    expect(await ben.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: true, interactionId: "act_1" });
    expect((await waitForTerminal(ann, sessionId, turnId)).type).toBe("turn.completed");
    expect(payloadsOf(ann.eventsOf(sessionId), "approval.voted")).toEqual([{ id: "act_1", approver: "ann", approvals: 1, needed: 2 }]);
    expect(payloadsOf(ann.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
  });
});

describe("a rule naming its deciders", () => {
  it("is not offered to a controller it does not name ('dev') nor decided by it through interaction/approve, but is by 'lead'", async () => {
    const ann = await ask("ann");
    const dev = await ask("dev", ["reverseRequests"]);
    const lead = await ask("lead", ["reverseRequests"]);
    let devAsked = false;
    dev.reverse = async () => {
      devAsked = true;
      return { decision: "allow_once" };
    };
    const leadAsked = deferred<void>();
    // Lead is asked, and decides below through interaction/approve, which withdraws this request.
    lead.reverse = () => {
      leadAsked.resolve();
      return new Promise(() => {});
    };
    const sessionId = await sessionOf(ann, dev, lead);
    const { turnId } = await ann.request("session/send", { sessionId, content: '/tool echo-json {"a":3}\nDone' });
    // Every connection's offer is settled before any is asked: once lead is asked, dev was passed over.
    await leadAsked.promise;
    expect(devAsked).toBe(false);
    const listed = (client: AskTestClient) => client.request("interaction/list", { sessionId }).then((r) => (r.interactions as Array<{ id: string; mayDecide?: boolean }>).map(({ id, mayDecide }) => ({ id, mayDecide })));
    expect(await listed(dev)).toEqual([{ id: "act_1", mayDecide: false }]);
    expect(await listed(lead)).toEqual([{ id: "act_1", mayDecide: true }]);
    const refused = await rpcError(dev.request("interaction/approve", { sessionId, interactionId: "act_1" }));
    expect(refused).toMatchObject({ code: FORBIDDEN, message: expect.stringContaining("principal 'dev' may not decide approval act_1: it is decided by principals lead") });
    expect(await pendingIds(ann, sessionId)).toEqual(["act_1"]);
    expect(payloadsOf(ann.eventsOf(sessionId), "approval.updated")).toEqual([]);
    // The core's one question for a dialect that offers the choice: who decides this approval.
    const interactions = suite.gw.stack.core!.sessions.get(sessionId)!.interactions;
    expect(await interactions.decidersOf("act_1")).toEqual({ principals: ["lead"], roles: [] });
    expect(await interactions.decidersOf("act_9")).toBe("any");

    expect(await lead.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: true, interactionId: "act_1" });
    expect((await waitForTerminal(ann, sessionId, turnId)).type).toBe("turn.completed");
    expect(payloadsOf(ann.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ isError: false, output: '{"a":3}' })]);
    const [receipt] = await audited(sessionId);
    expect(steps(receipt).filter((step) => step.step === "vote" || step.step === "decided")).toEqual([
      { step: "vote", approver: "lead", approve: true },
      { step: "decided", by: "client", outcome: "approved", detail: "once", approvers: ["lead"] },
    ]);
  });
  it("is not offered to an MCP connection of a controller it does not name: dev's tools lack tau-answer while lead's have it", async () => {
    const ann = await ask("ann");
    const sessionId = await sessionOf(ann);
    const mcpOf = async (who: Who) => {
      const client = sdkClient();
      await client.connect(webSocketTransport(`${suite.gw.wsUrl("/mcp/ws")}?access_token=${TOKENS[who]}`));
      closers.push(() => client.close().catch(() => undefined));
      // Subscribing to the session's transcript is watching it: what it waits for is this connection's to answer, if its principal may.
      await client.subscribeResource({ uri: `tau://session/${sessionId}` });
      const toolsChanged = deferred<void>();
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => toolsChanged.resolve());
      return Object.assign(client, { toolsChanged: toolsChanged.promise });
    };
    const [dev, lead] = [await mcpOf("dev"), await mcpOf("lead")];
    const tools = async (client: Awaited<ReturnType<typeof mcpOf>>) => (await client.listTools()).tools.map((tool) => tool.name);
    const { turnId } = await ann.request("session/send", { sessionId, content: '/tool echo-json {"a":3}\nDone' });
    // Lead is told its tools changed (tau-answer came); by then dev's watch knows of the approval as well.
    await lead.toolsChanged;
    expect(await tools(lead)).toContain("tau-answer");
    expect(await tools(dev)).not.toContain("tau-answer");
    const answered = await lead.callTool({ name: "tau-answer", arguments: { sessionId, action: "approve" } });
    expect(answered.isError).toBeFalsy();
    expect((await waitForTerminal(ann, sessionId, turnId)).type).toBe("turn.completed");
  });
});

describe("a rule's deadline", () => {
  it("decides by onDeadline (deny) when nobody decides, and the turn goes on", async () => {
    const ann = await ask("ann");
    const sessionId = await sessionOf(ann);
    const { turnId } = await ann.request("session/send", { sessionId, content: '/tool echo-json {"a":4}\nDone' });
    const end = await waitForTerminal(ann, sessionId, turnId);
    expect(end.type).toBe("turn.completed");
    expect(payloadsOf(ann.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "rejected", feedback: "decided by deadline" }]);
    expect(payloadsOf(ann.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ isError: true, output: expect.stringContaining("not approved: decided by deadline") })]);
    expect(await pendingIds(ann, sessionId)).toEqual([]);
    const [receipt] = await audited(sessionId);
    expect(steps(receipt)).toEqual([
      { step: "proposed" },
      { step: "asked", whom: "the session's clients; decided by principals lead" },
      { step: "decided", by: "deadline", outcome: "rejected", detail: "decided by deadline" },
      { step: "returned", ok: false, error: "not approved: decided by deadline" },
    ]);
  });
});
