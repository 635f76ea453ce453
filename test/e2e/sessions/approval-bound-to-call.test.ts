import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { openPolicyGatewayForFile } from "../../support/policy-gateway.js";
import { AcpSdkEditor } from "../../support/acp-sdk-editor.js";
import { openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { auditedReceipts } from "../../support/audit-file.js";
import { completedItems } from "../../support/codex-client.js";
import { sdkClient, webSocketTransport } from "../../support/mcp-client.js";

/**
 * A decision a policy's `require` rule asks for is bound to its call: the same tool with a changed
 * argument is asked about again, whatever the first answer said ("for the session" included), so no
 * dialect offers a choice beyond the call — Ask's allowedScopes, Codex's availableDecisions, ACP's
 * options and MCP's form say "once" only — and each call runs with its own digest.
 */

const POLICY = `version: bound-1
rules:
  - name: every-echo
    match: { tool: echo-json }
    action: require
`;
/** One turn, the same tool twice, the argument changed. */
const TWO_CALLS = '/tool echo-json {"a":5}\n/tool echo-json {"a":6}\nDone';

const suite = openPolicyGatewayForFile(POLICY, "approval-bound-");
const { auditDir } = suite;

const steps = (receipt: { steps: Array<Record<string, unknown>> }) => receipt.steps.map(({ at: _at, ...step }) => step);

/** Both calls' receipts: each decided by a client once, each run with its own digest (the two differ). */
async function expectTwoBoundReceipts(sessionId: string): Promise<void> {
  const receipts = await auditedReceipts(suite.gw, auditDir, sessionId);
  expect(receipts.map((r) => r.rule)).toEqual([
    { name: "every-echo", index: 0 },
    { name: "every-echo", index: 0 },
  ]);
  expect(new Set(receipts.map((r) => r.digest)).size).toBe(2);
  for (const receipt of receipts) {
    expect(steps(receipt)).toEqual([
      { step: "proposed" },
      { step: "asked", whom: "the session's clients; decided by any controller" },
      { step: "vote", approver: "(no principal)", approve: true },
      { step: "decided", by: "client", outcome: "approved", detail: "once", approvers: ["(no principal)"] },
      { step: "executed", digest: receipt.digest },
      { step: "returned", ok: true },
    ]);
  }
}

describe("a decision bound to its call", () => {
  it("in Ask: allowedScopes is once only, an answer 'for the session' approves this call alone, and the changed call is asked again", async () => {
    const ask = await suite.gw.client();
    const asked: Array<Record<string, unknown>> = [];
    ask.reverse = (_method, params) => {
      asked.push(params);
      return { decision: "allow_always" };
    };
    const sessionId = await openSession(ask, { capabilities: ["reverseRequests"] });
    const { turnId } = await ask.request("session/send", { sessionId, content: TWO_CALLS });
    expect((await waitForTerminal(ask, sessionId, turnId)).type).toBe("turn.completed");
    expect(asked.map((p) => [p.input, p.allowedScopes])).toEqual([
      [{ a: 5 }, ["once"]],
      [{ a: 6 }, ["once"]],
    ]);
    const events = ask.eventsOf(sessionId);
    expect(payloadsOf(events, "approval.required").map((p) => p.allowedScopes)).toEqual([["once"], ["once"]]);
    // Approved, not "for the session": nothing was granted beyond each call.
    expect(payloadsOf(events, "approval.updated")).toEqual([
      { id: "act_1", status: "approved" },
      { id: "act_2", status: "approved" },
    ]);
    expect(payloadsOf(events, "tool.result").map((r) => r.output)).toEqual(['{"a":5}', '{"a":6}']);
    expect(ask.invalid).toEqual([]);
    await expectTwoBoundReceipts(sessionId);
    ask.socket.terminate();
  });

  it("in Codex: availableDecisions leaves acceptForSession out, and the changed call's command is asked about again", async () => {
    const codex = await suite.gw.codexClient();
    await codex.initialize();
    const { thread } = await codex.request("thread/start", { approvalPolicy: "on-request" });
    // Answered "for the session" all the same: it approves the one call.
    codex.onRequest("item/commandExecution/requestApproval", () => ({ decision: "acceptForSession" }));
    const { messages } = await codex.turn(thread.id, TWO_CALLS);
    const requests = codex.serverRequests("item/commandExecution/requestApproval");
    expect(requests.map((r) => r.params.availableDecisions)).toEqual([
      ["accept", "decline", "cancel"],
      ["accept", "decline", "cancel"],
    ]);
    expect(completedItems(messages, "commandExecution").map((item) => [item.status, item.aggregatedOutput])).toEqual([
      ["completed", '{"a":5}'],
      ["completed", '{"a":6}'],
    ]);
    expect(codex.invalid).toEqual([]);
    await expectTwoBoundReceipts(thread.id);
    codex.socket.terminate();
  });

  it("in ACP (the official SDK client): the options are allow once and reject once, and the changed call is asked about again", async () => {
    const editor = AcpSdkEditor.open(suite.gw.acpUrl, {});
    await editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
    const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, { cwd: suite.gw.cwd, mcpServers: [] });
    const prompted = editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: TWO_CALLS }] });
    for (const a of [5, 6]) {
      const asked = await editor.permission();
      expect(asked.params.toolCall.rawInput).toEqual({ a });
      expect(asked.params.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
      asked.answer({ outcome: { outcome: "selected", optionId: "allow_once" } });
    }
    expect((await prompted).stopReason).toBe("end_turn");
    await expectTwoBoundReceipts(sessionId);
    await editor.close();
  });

  it("in MCP: the form offers allow once and reject, and the changed call's form comes again", async () => {
    const client: Client = sdkClient({ elicitation: true });
    const forms: Array<ElicitRequest["params"]> = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      forms.push(request.params);
      return { action: "accept", content: { decision: "approve" } };
    });
    await client.connect(webSocketTransport(suite.gw.rpcUrl.replace(/\/rpc$/, "/mcp/ws")));
    const ask = await suite.gw.client();
    const sessionId = await openSession(ask);
    const result = await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: TWO_CALLS } });
    expect(result.structuredContent).toEqual(expect.objectContaining({ status: "completed" }));
    const choices = forms.map((form) => ("requestedSchema" in form ? (form.requestedSchema.properties.decision as { oneOf: Array<{ const: string }> }).oneOf.map((o) => o.const) : []));
    expect(choices).toEqual([
      ["approve", "reject"],
      ["approve", "reject"],
    ]);
    expect(forms.map((form) => form.message)).toEqual([expect.stringContaining('{"a":5}'), expect.stringContaining('{"a":6}')]);
    await expectTwoBoundReceipts(sessionId);
    await client.close();
    ask.socket.terminate();
  });
});
