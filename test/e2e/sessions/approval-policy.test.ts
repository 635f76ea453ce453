import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { openPolicyGatewayForFile } from "../../support/policy-gateway.js";
import * as acp from "@agentclientprotocol/sdk";
import { AcpSdkEditor } from "../../support/acp-sdk-editor.js";
import { openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { agentText, completedItems } from "../../support/codex-client.js";
import { sdkClient, webSocketTransport } from "../../support/mcp-client.js";
import { auditedReceipts } from "../../support/audit-file.js";

/**
 * The operator's approval policy decides before any client is asked: a denied call is refused with
 * its rule named, in the tool result the agent gets and in what every dialect's client sees, and
 * nobody is asked; an allowed call runs without asking anyone, and the decision is in the stream.
 */

const POLICY = `version: 1
rules:
  - name: no-sevens
    match: { tool: echo-json, arguments: { /a: "7" } }
    action: deny
    reason: seven is reserved
  - name: single-digits
    match: { tool: "echo-*", arguments: { /a: "?" } }
    action: allow
`;
const REFUSAL = 'denied by the approval policy, rule "no-sevens" (/rules/0): seven is reserved';
const DENIED = '/tool echo-json {"a":7}\nDone';
const ALLOWED = '/tool echo-json {"a":3}\nDone';

const suite = openPolicyGatewayForFile(POLICY, "approval-audit-");
const { auditDir } = suite;

const audited = (sessionId: string) => auditedReceipts(suite.gw, auditDir, sessionId);

/**
 * A turn sent by an Ask client that answers every permission request with `decision`, counting
 * them: what the policy lets through, refuses, or leaves to the session's mode, each dialect alike.
 */
async function turnAnswering(decision: string, content: string) {
  const ask = await suite.gw.client();
  let asked = 0;
  ask.reverse = () => {
    asked++;
    return { decision };
  };
  const sessionId = await openSession(ask, { capabilities: ["reverseRequests"] });
  const { turnId } = await ask.request("session/send", { sessionId, content });
  await waitForTerminal(ask, sessionId, turnId);
  return { ask, sessionId, asked: () => asked };
}

const steps = (receipt: { steps: Array<Record<string, unknown>> }) => receipt.steps.map(({ at: _at, ...step }) => step);

describe("a call the policy denies", () => {
  it("is refused with its rule in Ask, and no client is asked", async () => {
    const { ask, sessionId, asked } = await turnAnswering("allow_once", DENIED);
    const events = ask.eventsOf(sessionId);
    expect(payloadsOf(events, "approval.required")).toEqual([]);
    expect(payloadsOf(events, "approval.updated")).toEqual([expect.objectContaining({ status: "rejected", feedback: REFUSAL })]);
    expect(payloadsOf(events, "tool.result")).toEqual([expect.objectContaining({ isError: true, output: expect.stringContaining(REFUSAL) })]);
    expect(payloadsOf(events, "turn.completed")).toEqual([expect.objectContaining({ response: expect.stringContaining(`Tool echo-json failed: ${REFUSAL}`) })]);
    expect(asked()).toBe(0);
    expect(ask.invalid).toEqual([]);
    const [receipt, ...more] = await audited(sessionId);
    expect(more).toEqual([]);
    expect(receipt).toMatchObject({ tool: "echo-json", policyVersion: "1", rule: { name: "no-sevens", index: 0 }, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(steps(receipt)).toEqual([
      { step: "proposed" },
      { step: "decided", by: "rule", outcome: "rejected", detail: REFUSAL },
      { step: "returned", ok: false, error: REFUSAL },
    ]);
    ask.socket.terminate();
  });

  it("is refused with its rule in Codex, and no approval is requested", async () => {
    const codex = await suite.gw.codexClient();
    await codex.initialize();
    const { thread } = await codex.request("thread/start", { approvalPolicy: "on-request" });
    codex.onRequest("item/commandExecution/requestApproval", () => ({ decision: "accept" }));
    const { messages } = await codex.turn(thread.id, DENIED);
    expect(codex.serverRequests()).toEqual([]);
    expect(agentText(messages)).toContain(`Tool echo-json failed: ${REFUSAL}`);
    expect(completedItems(messages, "commandExecution").map((item) => item.status)).not.toContain("completed");
    expect(codex.invalid).toEqual([]);
    codex.socket.terminate();
  });

  it("is refused with its rule in ACP (the official SDK client), and no permission is requested", async () => {
    const editor = AcpSdkEditor.open(suite.gw.acpUrl, {});
    await editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
    const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, { cwd: suite.gw.cwd, mcpServers: [] });
    const prompted = await editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: DENIED }] });
    expect(prompted.stopReason).toBe("end_turn");
    expect(editor.asked).toEqual([]);
    const said = editor.updates.flatMap(({ update }) => (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? [update.content.text] : [])).join("");
    expect(said).toContain(`Tool echo-json failed: ${REFUSAL}`);
    await editor.close();
  });

  it("is refused with its rule in MCP, and no form is shown", async () => {
    const client: Client = sdkClient({ elicitation: true });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: "accept", content: { decision: "approve" } };
    });
    await client.connect(webSocketTransport(suite.gw.rpcUrl.replace(/\/rpc$/, "/mcp/ws")));
    const ask = await suite.gw.client();
    const sessionId = await openSession(ask);
    const result = await client.callTool({ name: "tau-reply", arguments: { sessionId, prompt: DENIED } });
    expect(result.structuredContent).toEqual(expect.objectContaining({ status: "completed", text: expect.stringContaining(`Tool echo-json failed: ${REFUSAL}`) }));
    expect(asked).toBe(0);
    await client.close();
    ask.socket.terminate();
  });
});

describe("a call the policy allows", () => {
  it("runs without asking anyone, and the stream says the policy allowed it", async () => {
    const { ask, sessionId, asked } = await turnAnswering("deny", ALLOWED);
    const events = ask.eventsOf(sessionId);
    expect(payloadsOf(events, "approval.required")).toEqual([]);
    expect(payloadsOf(events, "approval.updated")).toEqual([
      expect.objectContaining({ status: "approved", reason: 'allowed by the approval policy, rule "single-digits" (/rules/1)' }),
    ]);
    expect(payloadsOf(events, "tool.result")).toEqual([expect.objectContaining({ isError: false, output: '{"a":3}' })]);
    expect(asked()).toBe(0);
    const receipts = await audited(sessionId);
    // What ran is the call that was decided: its digest is in the record.
    expect(receipts.map(steps)).toEqual([
      [{ step: "proposed" }, { step: "decided", by: "rule", outcome: "approved" }, { step: "executed", digest: receipts[0].digest }, { step: "returned", ok: true }],
    ]);
    ask.socket.terminate();
  });

  it("leaves a call no rule matches to the session's mode, which asks", async () => {
    const { ask, sessionId, asked } = await turnAnswering("allow_once", '/tool echo-json {"a":42}\nDone');
    expect(asked()).toBe(1);
    expect(payloadsOf(ask.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ isError: false, output: '{"a":42}' })]);
    const [receipt] = await audited(sessionId);
    expect(receipt).toMatchObject({ interactionId: "act_1" });
    // The same receipt is read back over HTTP; an unknown session is a 404.
    const base = suite.gw.rpcUrl.replace(/^ws/, "http").replace(/\/rpc$/, "");
    const read = await fetch(`${base}/sessions/${sessionId}/receipts`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ sessionId, receipts: [receipt] });
    expect((await fetch(`${base}/sessions/no-such-session/receipts`)).status).toBe(404);
    expect(receipt.rule).toBeUndefined();
    expect(steps(receipt)).toEqual([
      { step: "proposed" },
      { step: "asked", whom: "the session's clients" },
      { step: "decided", by: "client", outcome: "approved", detail: "once" },
      { step: "executed", digest: receipt.digest },
      { step: "returned", ok: true },
    ]);
    ask.socket.terminate();
  });
});
