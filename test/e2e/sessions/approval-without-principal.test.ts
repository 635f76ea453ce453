import { describe, expect, it } from "vitest";
import { parseApprovalPolicy } from "../../../src/bridge/interactions/index.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { deferred, ECHO_TOOL } from "../../support/echo-tool.js";
import { startTestGateway } from "../../support/gateway.js";
import { startInspectorGateway } from "../../support/inspector-gateway.js";

/**
 * Callers without a principal (no tokens, the stdio commands, the Ask socket) never satisfy a
 * `require` rule that names its deciders or needs several distinct approvers: they are not asked,
 * and their answer (Ask's interaction/approve or reject) is refused with forbidden while the
 * approval stays pending. A rule that names nobody and needs one approval they decide as before.
 * The bridge holds to this even when the policy reaches it without the command line's start check
 * (which refuses such a policy without tokens). And an operator answering on the inspector page
 * answers as its own principal: held to the deciders a rule names like anyone.
 */

const cleanups = cleanupsAfterEach();
const POLICY = `version: 1
rules:
  - name: leads
    match: { tool: echo-json, arguments: { /a: "1" } }
    action: require
    approvers: { principals: [lead] }
  - name: two-people
    match: { tool: echo-json, arguments: { /a: "2" } }
    action: require
    count: 2
  - name: anyone
    match: { tool: echo-json, arguments: { /a: "3" } }
    action: require
`;
const call = (a: number) => `/tool echo-json {"a":${a}}\nDone`;

/**
 * An operator ("ops", operator token) and a lead ("lead") on an inspector gateway with POLICY: the
 * lead's session runs `call(a)` and waits on its approval, which the lead answers through `answer`;
 * then the operator approves it once from the inspector page. Resolves with the page's response.
 */
async function operatorApproves(a: number) {
  const tokens = TokenRegistry.parse(
    JSON.stringify([
      { id: "ops", token: "ops-token", tenant: "ops", operator: true },
      { id: "lead", token: "lead-token", tenant: "team" },
    ]),
    "tokens.json",
  );
  const gw = await cleanups.stopAfterTest(startInspectorGateway({ tokens, commandTools: [ECHO_TOOL], approvalPolicy: parseApprovalPolicy(POLICY, "policy.yaml") }));
  const lead = await AskTestClient.websocket(gw.wsUrl("/rpc"), { headers: { authorization: "Bearer lead-token" } });
  cleanups.push(() => lead.socket.close());
  const answer = deferred<{ decision: string }>();
  lead.reverse = () => answer.promise;
  const sessionId = await openSession(lead, { capabilities: ["reverseRequests"] });
  const { turnId } = await lead.request("session/send", { sessionId, content: call(a) });
  await lead.waitForEvent(sessionId, "approval.required");

  const page = { authorization: "Bearer ops-token", origin: gw.baseUrl };
  const csrf = await (await fetch(`${gw.baseUrl}/inspector/api/csrf`, { headers: page })).json();
  const post = await fetch(`${gw.baseUrl}/inspector/api/sessions/${sessionId}/interactions/act_1`, {
    method: "POST",
    headers: { ...page, "content-type": "application/json", [csrf.header]: csrf.token },
    body: JSON.stringify({ action: "approve", scope: "once" }),
  });
  return { gw, lead, answer, sessionId, turnId, post };
}

describe("an approval under a rule only principals can satisfy", () => {
  it("is neither offered to nor decided by a caller without a principal; a rule that names nobody is", async () => {
    const gw = await startTestGateway({ commandTools: [ECHO_TOOL], approvalPolicy: parseApprovalPolicy(POLICY, "policy.yaml") });
    cleanups.push(() => gw.stop());
    const ask = await gw.client();
    const asked: string[] = [];
    ask.reverse = (_method, params) => {
      asked.push(String(params.interactionId));
      return { decision: "allow_once" };
    };
    const sessionId = await openSession(ask, { capabilities: ["reverseRequests"] });

    for (const [a, rule, deciders] of [
      [1, "leads", "principals lead"],
      [2, "two-people", "any controller"],
    ] as const) {
      const { turnId } = await ask.request("session/send", { sessionId, content: call(a) });
      const id = `act_${a}`;
      await ask.waitFor(() => payloadsOf(ask.eventsOf(sessionId), "approval.required").some((p) => (p as { id: string }).id === id), `${id} to be required`);
      for (const answer of ["interaction/approve", "interaction/reject"]) {
        const refused = await rpcError(ask.request(answer, { sessionId, interactionId: id }));
        expect(refused.code, `${rule} ${answer}`).toBe(-32011);
        expect(refused.message).toBe(`-32011: a caller without a principal (no token) may not decide approval ${id}: it is decided by ${deciders}`);
      }
      // Still pending, and this client was never asked about it.
      expect((await ask.request("interaction/list", { sessionId })).interactions.map((i: { id: string }) => i.id)).toEqual([id]);
      expect(asked).toEqual([]);
      await ask.request("session/abort", { sessionId, turnId });
      await waitForTerminal(ask, sessionId, turnId);
      const receipt = gw.stack.receipts.of(sessionId)!.receipts.at(-1)!;
      expect(receipt.rule?.name).toBe(rule);
      expect(receipt.steps.filter((s) => s.step === "vote" || s.step === "decided")).toEqual([]);
    }

    // A rule that names nobody and needs one approval: asked, and decided by the caller without a principal.
    const { turnId } = await ask.request("session/send", { sessionId, content: call(3) });
    expect((await waitForTerminal(ask, sessionId, turnId)).type).toBe("turn.completed");
    expect(asked).toEqual(["act_3"]);
    expect(payloadsOf(ask.eventsOf(sessionId), "approval.updated").at(-1)).toMatchObject({ id: "act_3", status: "approved" });
    const receipt = gw.stack.receipts.of(sessionId)!.receipts.at(-1)!;
    expect(receipt.steps.find((s) => s.step === "decided")).toMatchObject({ by: "client", outcome: "approved", approvers: ["(no principal)"] });
  });

  it("holds an operator answering on the inspector page to the rule's deciders, as its own principal", async () => {
    const { gw, lead, answer, sessionId, turnId, post } = await operatorApproves(1);
    expect(post.status).toBe(403);
    expect(await post.json()).toEqual({ error: "forbidden", message: "principal 'ops' may not decide approval act_1: it is decided by principals lead" });

    // The lead's own answer still decides it.
    answer.resolve({ decision: "allow_once" });
    expect((await waitForTerminal(lead, sessionId, turnId)).type).toBe("turn.completed");
    const [receipt] = gw.stack.receipts.of(sessionId)!.receipts;
    expect(receipt!.steps.find((s) => s.step === "decided")).toMatchObject({ by: "client", outcome: "approved", approvers: ["lead"] });
  });

  it("tells an operator whose answer is one vote of several that it is a vote, with its count, not the decision", async () => {
    const { gw, lead, answer, sessionId, turnId, post } = await operatorApproves(2);
    expect(post.status).toBe(200);
    expect(await post.json()).toMatchObject({ decided: false, vote: { approvals: 1, needed: 2 }, decision: { action: "approve", by: "ops", vote: { approvals: 1, needed: 2 } } });
    expect(gw.stack.receipts.of(sessionId)!.receipts[0]!.steps.some((s) => s.step === "decided")).toBe(false);

    // The lead's approval is the second vote: it decides.
    answer.resolve({ decision: "allow_once" });
    expect((await waitForTerminal(lead, sessionId, turnId)).type).toBe("turn.completed");
    const [receipt] = gw.stack.receipts.of(sessionId)!.receipts;
    expect(receipt!.steps.find((s) => s.step === "decided")).toMatchObject({ outcome: "approved", approvers: ["ops", "lead"] });
  });
});
