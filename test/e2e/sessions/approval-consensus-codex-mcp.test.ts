import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, LoggingMessageNotificationSchema, type ElicitRequest, type LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { eventually } from "../../support/ask-events.js";
import { auditedReceipts } from "../../support/audit-file.js";
import { CodexTestClient, type CodexMessage } from "../../support/codex-client.js";
import { deferred } from "../../support/echo-tool.js";
import { sdkClient, webSocketTransport } from "../../support/mcp-client.js";
import { policyGatewayForFile } from "../../support/policy-gateway.js";

/**
 * A consensus rule (`count: 2`) decided by a Codex app-server client and an MCP client, each with
 * its own principal from the tokens file, over real sockets: whichever answers first casts a vote
 * that runs nothing (the command item stays in progress, nothing is decided), the second decides,
 * and the audit file lists both votes and the digest of what ran. An MCP client that votes by
 * answering the form is told in a log message that it was a vote, and how many are counted.
 */

const POLICY = `version: consensus-codex-mcp
rules:
  - name: two-of-us
    match: { tool: echo-json }
    action: require
    approvers: { principals: [ann, ben] }
    count: 2
`;

const TOKENS = { ann: "tok-ann-codex-mcp-1", ben: "tok-ben-codex-mcp-2" };
type Who = keyof typeof TOKENS;

const suite = policyGatewayForFile(TOKENS, POLICY, "approval-consensus-codex-mcp-");
const { auditDir, closers } = suite;

async function codex(who: Who): Promise<CodexTestClient> {
  const client = await CodexTestClient.websocket(suite.gw.wsUrl("/"), { authorization: `Bearer ${TOKENS[who]}` });
  closers.push(() => client.socket.terminate());
  await client.initialize();
  return client;
}

async function mcp(who: Who): Promise<Client> {
  return (await mcpWithForms(who)).client;
}

/** An MCP client of `who` on the WebSocket; with `answer` it shows forms and answers each so. It keeps its log messages and the forms it was shown. */
async function mcpWithForms(who: Who, answer?: () => { action: "accept"; content: { decision: string } }) {
  const client = sdkClient({ elicitation: answer !== undefined });
  const asked: ElicitRequest[] = [];
  const logs: LoggingMessageNotification["params"][] = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request);
      return answer();
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
  const transport = webSocketTransport(`${suite.gw.wsUrl("/mcp/ws")}?access_token=${TOKENS[who]}`);
  await client.connect(transport);
  closers.push(() => client.close().catch(() => undefined));
  return { client, asked, logs, transport };
}

const logged = (text: string, sessionId: string) => eventually(() => suite.gw.bridgeLog().some((line) => line.includes(text) && line.includes(sessionId)), text);
const steps = (receipt: { steps: Array<Record<string, unknown>> }) => receipt.steps.map(({ at: _at, ...step }) => step);
const commandItems = (client: CodexTestClient, method: string) => client.notifications(method).filter((m) => m.params.item.type === "commandExecution");

/** Ann's thread, and a turn whose call of echo-json waits for approval; resolves once ann is asked. `beforeTurn` runs once the thread exists. */
async function turnAskingAnn(ann: CodexTestClient, a: number, answer: Promise<unknown>, beforeTurn?: (threadId: string) => Promise<unknown>) {
  const asked = deferred<CodexMessage>();
  ann.onRequest("item/commandExecution/requestApproval", (_params, message) => {
    asked.resolve(message);
    return answer;
  });
  const { thread } = await ann.request("thread/start", { cwd: suite.gw.cwd, approvalPolicy: "on-request" });
  const threadId = thread.id as string;
  await beforeTurn?.(threadId);
  const { turn } = await ann.request("turn/start", { threadId, input: [{ type: "text", text: `/tool echo-json {"a":${a}}\nDone`, text_elements: [] }] });
  await asked.promise;
  return { threadId, turnId: turn.id as string };
}

async function expectAudited(sessionId: string, voters: [Who, Who]) {
  const [receipt, ...more] = await auditedReceipts(suite.gw, auditDir, sessionId);
  expect(more).toEqual([]);
  expect(receipt).toMatchObject({ rule: { name: "two-of-us", index: 0 }, interactionId: "act_1", digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
  expect(steps(receipt)).toEqual([
    { step: "proposed" },
    { step: "asked", whom: "the session's clients; decided by principals ann, ben, 2 distinct approvers" },
    { step: "vote", approver: voters[0], approve: true },
    { step: "vote", approver: voters[1], approve: true },
    { step: "decided", by: "client", outcome: "approved", detail: "once", approvers: voters },
    { step: "executed", digest: receipt.digest },
    { step: "returned", ok: true },
  ]);
}

describe("a consensus rule (count 2) with a Codex approver and an MCP approver", () => {
  it("Codex votes first (nothing runs), MCP's tau-answer decides; the audit lists both votes and the digest that ran", async () => {
    const ann = await codex("ann");
    const ben = await mcp("ben");
    const { threadId, turnId } = await turnAskingAnn(ann, 5, Promise.resolve({ decision: "accept" }));
    await logged("approval vote counted: ann approves act_1 (1 of 2)", threadId);
    // One vote alone runs nothing: the command item is still in progress and nothing completed.
    expect(commandItems(ann, "item/started")).toEqual([expect.objectContaining({ params: expect.objectContaining({ item: expect.objectContaining({ status: "inProgress" }) }) })]);
    expect(commandItems(ann, "item/completed")).toEqual([]);
    expect(ann.notifications("turn/completed")).toEqual([]);
    // Nothing a Codex client reads as decided: its own request is settled (serverRequest/resolved, as
    // for any answered request), but the thread still waits on approval, as it does until the call runs.
    const [request] = ann.serverRequests("item/commandExecution/requestApproval");
    await ann.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === request!.id);
    expect(ann.notifications("thread/status/changed").at(-1)!.params.status).toEqual({ type: "active", activeFlags: ["waitingOnApproval"] });

    const beforeBen = ann.received.length;
    const answer = await ben.callTool({ name: "tau-answer", arguments: { sessionId: threadId, action: "approve" } });
    expect(answer).toMatchObject({ content: [{ type: "text", text: "approve: approval act_1" }], structuredContent: { sessionId: threadId, interactionId: "act_1", kind: "approval", action: "approve" } });
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).not.toHaveProperty("vote");
    const completed = await ann.turnCompleted(turnId);
    expect(completed.params.turn.status).toBe("completed");
    expect(commandItems(ann, "item/completed")).toEqual([expect.objectContaining({ params: expect.objectContaining({ item: expect.objectContaining({ status: "completed", aggregatedOutput: '{"a":5}' }) }) })]);
    await expectAudited(threadId, ["ann", "ben"]);
    // The thread waited on approval once, from the request until the second vote decided: the first vote changed no status.
    const statuses = ann.received.flatMap((m, index) => (m.method === "thread/status/changed" ? [{ index, status: m.params.status }] : []));
    expect(statuses.map((s) => s.status)).toEqual([
      { type: "active", activeFlags: [] },
      { type: "active", activeFlags: ["waitingOnApproval"] },
      { type: "active", activeFlags: [] },
      { type: "idle" },
    ]);
    expect(statuses[2]!.index).toBeGreaterThanOrEqual(beforeBen);
    expect(ann.invalid).toEqual([]);
  });

  it("MCP's tau-answer votes first (nothing runs), Codex's accept decides", async () => {
    const ann = await codex("ann");
    const ben = await mcp("ben");
    const annDecides = deferred<unknown>();
    const { threadId, turnId } = await turnAskingAnn(ann, 6, annDecides.promise);
    const answer = await ben.callTool({ name: "tau-answer", arguments: { sessionId: threadId, action: "approve" } });
    // A vote, in words no model reads as the decision.
    expect(answer.isError).toBeFalsy();
    expect(answer.content).toEqual([{ type: "text", text: "approve: approval act_1: vote counted, 1 of 2, not yet decided" }]);
    expect(answer.structuredContent).toEqual({ sessionId: threadId, interactionId: "act_1", kind: "approval", action: "approve", vote: { approvals: 1, needed: 2 } });
    await logged("approval vote counted: ben approves act_1 (1 of 2)", threadId);
    expect(commandItems(ann, "item/completed")).toEqual([]);
    expect(ann.notifications("turn/completed")).toEqual([]);

    annDecides.resolve({ decision: "accept" });
    expect((await ann.turnCompleted(turnId)).params.turn.status).toBe("completed");
    expect(commandItems(ann, "item/completed")).toEqual([expect.objectContaining({ params: expect.objectContaining({ item: expect.objectContaining({ status: "completed", aggregatedOutput: '{"a":6}' }) }) })]);
    await expectAudited(threadId, ["ben", "ann"]);
    expect(ann.invalid).toEqual([]);
  });

  it("an MCP client's form answer is one vote: a log message tells it so with the count, the approval stays pending, and Codex's accept decides", async () => {
    const ann = await codex("ann");
    const ben = await mcpWithForms("ben", () => ({ action: "accept", content: { decision: "approve" } }));
    // Log messages go only to a client that set its level (MCP leaves the default to the server): a vote is info.
    await ben.client.setLoggingLevel("info");
    const annDecides = deferred<unknown>();
    // Ben watches the thread before the turn, so the approval's form comes to it as the call asks.
    const { threadId, turnId } = await turnAskingAnn(ann, 8, annDecides.promise, (sessionId) => ben.client.subscribeResource({ uri: `tau://session/${sessionId}` }));
    const voted = () => ben.logs.filter((log) => (log.data as { event?: string }).event === "approval.voted");
    await eventually(() => voted().length === 1, "ben to be told its answer was a vote");
    expect(ben.asked).toHaveLength(1);
    expect(voted()).toEqual([
      {
        level: "info",
        logger: "tau-session",
        data: {
          sessionId: threadId,
          event: "approval.voted",
          message: "approval act_1: vote counted for ben, 1 of 2 approvers needed; not yet decided, it waits for 1 more",
          interactionId: "act_1",
          approver: "ben",
          approvals: 1,
          needed: 2,
        },
      },
    ]);
    // Still pending: nothing ran, the turn goes on, and the session still waits for a decision (tau-answer is ben's tool).
    expect(commandItems(ann, "item/completed")).toEqual([]);
    expect(ann.notifications("turn/completed")).toEqual([]);
    expect((await ben.client.listTools()).tools.map((tool) => tool.name)).toContain("tau-answer");

    annDecides.resolve({ decision: "accept" });
    expect((await ann.turnCompleted(turnId)).params.turn.status).toBe("completed");
    expect(commandItems(ann, "item/completed")).toEqual([expect.objectContaining({ params: expect.objectContaining({ item: expect.objectContaining({ status: "completed", aggregatedOutput: '{"a":8}' }) }) })]);
    await expectAudited(threadId, ["ben", "ann"]);
    // The deciding vote is no vote message: the one of ben's is all.
    expect(voted()).toHaveLength(1);
    expect(ben.transport.problems()).toEqual([]);
    expect(ann.invalid).toEqual([]);
  });
});
