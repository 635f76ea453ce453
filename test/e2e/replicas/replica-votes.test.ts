import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { ECHO_TOOL } from "../../support/echo-tool.js";
import { leasesOwned, startReplicaSet, until } from "../../support/replica-set.js";

/**
 * Votes on a consensus rule (`count: 2`) given on two replicas sharing one redis-server, every part
 * a real process: replica A holds the Tau host (and the call); a vote given on B travels through the
 * interaction store to A, which counts it. The approval stays pending while votes are counted, so a
 * vote is never turned away while the approval is open (not even one given at the same moment as
 * another); the call runs once, and A's audit file lists every vote and the digest that ran.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 240_000;
const TOKENS = { ann: "tok-ann-replica-votes-1", ben: "tok-ben-replica-votes-2", cat: "tok-cat-replica-votes-3", ops: "tok-ops-replica-votes-4", dev: "tok-dev-replica-votes-5" };
type Who = keyof typeof TOKENS;

const POLICY = `version: replica-votes-1
rules:
  - name: two-of-us
    match: { tool: echo-json }
    action: require
    approvers: { principals: [ann, ben, cat] }
    count: 2
`;

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-replica-votes-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Two replicas with the tokens, the echo tool, the policy and one audit folder (only A, holding the calls, writes to it). */
async function twoReplicas() {
  const dir = tempDir();
  const files = { tokens: join(dir, "tokens.json"), tools: join(dir, "tools.json"), policy: join(dir, "policy.yaml"), audit: join(dir, "audit") };
  writeFileSync(
    files.tokens,
    JSON.stringify([
      ...(["ann", "ben", "cat", "dev"] as const).map((id) => ({ id, token: TOKENS[id], tenant: "team" })),
      { id: "ops", token: TOKENS.ops, tenant: "operations", operator: true },
    ]),
  );
  writeFileSync(files.tools, JSON.stringify({ tools: [ECHO_TOOL] }));
  writeFileSync(files.policy, POLICY);
  const serveArgs = ["--tokens-file", files.tokens, "--tools-config", files.tools, "--approval-policy", files.policy, "--audit", files.audit];
  const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs, metricsToken: TOKENS.ops });
  const [a, b] = set.replicas as [ServingCli, ServingCli];
  expect([await leasesOwned(a, TOKENS.ops), await leasesOwned(b, TOKENS.ops)]).toEqual([1, 0]);
  return { a, b, auditFile: join(files.audit, "audit.jsonl") };
}

async function client(replica: ServingCli, who: Who): Promise<AskTestClient> {
  const ask = await AskTestClient.websocket(`${replica.baseUrl.replace("http://", "ws://")}/rpc`, { headers: { authorization: `Bearer ${TOKENS[who]}` } });
  cleanups.push(() => ask.socket.terminate());
  await ask.request("initialize", { client: { name: `replica-votes-${who}`, version: "1" } });
  return ask;
}

/** Ann's session through `owner` (on A), subscribed by every client; the turn calling echo-json, once every client sees its approval. */
async function approvalOnEveryReplica(owner: AskTestClient, others: AskTestClient[], a: number) {
  const { session } = await owner.request("session/create", {});
  const sessionId = session.sessionId as string;
  for (const c of [owner, ...others]) await c.request("session/subscribe", { sessionId });
  const { turnId } = await owner.request("session/send", { sessionId, content: `/tool echo-json {"a":${a}}\nDone` });
  for (const c of [owner, ...others]) await c.waitForEvent(sessionId, "approval.required");
  return { sessionId, turnId: turnId as string };
}

/** The receipt of the session's call in A's audit file, once A has written it. */
function auditedReceipt(auditFile: string, sessionId: string): Promise<any> {
  return until(() => {
    if (!existsSync(auditFile)) return undefined;
    const lines = readFileSync(auditFile, "utf8").split("\n").filter(Boolean);
    return lines.map((line) => JSON.parse(line)).find((receipt) => receipt.sessionId === sessionId);
  }, "the call's receipt in the audit file");
}

const steps = (receipt: { steps: Array<Record<string, unknown>> }) => receipt.steps.map(({ at: _at, ...step }) => step);
const listed = async (c: AskTestClient, sessionId: string) => ((await c.request("interaction/list", { sessionId })).interactions as Array<{ id: string }>).map((i) => i.id);

describe("votes on a consensus rule given on two replicas sharing Redis", () => {
  it(
    "one vote on B (counted by A, the approval still pending everywhere) and one on A decide; the call runs once and the audit lists both votes",
    async () => {
      const { a, b, auditFile } = await twoReplicas();
      const annOnA = await client(a, "ann");
      const benOnB = await client(b, "ben");
      const devOnB = await client(b, "dev");
      const { sessionId, turnId } = await approvalOnEveryReplica(annOnA, [benOnB, devOnB], 3);

      // A controller the rule does not name is refused on B in the words A would use, and nothing is sent to A.
      const refused = await rpcError(devOnB.request("interaction/approve", { sessionId, interactionId: "act_1" }));
      expect(refused).toMatchObject({ code: -32011, message: expect.stringContaining("principal 'dev' may not decide approval act_1: it is decided by principals ann, ben, cat") });

      // B does not hold the call: the vote is handed to A, which counts it, and B says so (no count yet, not approved).
      expect(await benOnB.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: false, interactionId: "act_1", vote: { needed: 2 } });
      // A's count reaches every replica's clients as approval.voted.
      expect((await benOnB.waitForEvent(sessionId, "approval.voted")).payload).toEqual({ id: "act_1", approver: "ben", approvals: 1, needed: 2 });
      // A vote leaves the approval open on every replica: listed on both, decided on none.
      expect(await listed(benOnB, sessionId)).toEqual(["act_1"]);
      expect(await listed(annOnA, sessionId)).toEqual(["act_1"]);
      expect(payloadsOf(annOnA.eventsOf(sessionId), "approval.updated")).toEqual([]);

      expect(await annOnA.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: true, interactionId: "act_1" });
      for (const c of [annOnA, benOnB]) {
        expect((await waitForTerminal(c, sessionId, turnId)).type).toBe("turn.completed");
        expect(payloadsOf(c.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
        expect(payloadsOf(c.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ isError: false, output: '{"a":3}' })]);
      }
      const receipt = await auditedReceipt(auditFile, sessionId);
      expect(steps(receipt)).toEqual([
        { step: "proposed" },
        { step: "asked", whom: "the session's clients; decided by principals ann, ben, cat, 2 distinct approvers" },
        { step: "vote", approver: expect.any(String), approve: true },
        { step: "vote", approver: expect.any(String), approve: true },
        { step: "decided", by: "client", outcome: "approved", detail: "once", approvers: expect.any(Array) },
        { step: "executed", digest: receipt.digest },
        { step: "returned", ok: true },
      ]);
      // A counted B's vote before A's own was given.
      expect(receipt.steps.filter((s: { step: string }) => s.step === "vote").map((s: { approver: string }) => s.approver)).toEqual(["ben", "ann"]);
      expect(receipt.steps.find((s: { step: string }) => s.step === "decided").approvers).toEqual(["ben", "ann"]);
    },
    TEST_TIMEOUT,
  );

  it(
    "two votes given on B at the same moment are both taken (neither is told the approval is not pending) and decide; the call runs once",
    async () => {
      const { a, b, auditFile } = await twoReplicas();
      const annOnA = await client(a, "ann");
      const benOnB = await client(b, "ben");
      const catOnB = await client(b, "cat");
      const { sessionId, turnId } = await approvalOnEveryReplica(annOnA, [benOnB, catOnB], 4);

      const answers = await Promise.allSettled([
        benOnB.request("interaction/approve", { sessionId, interactionId: "act_1" }),
        catOnB.request("interaction/approve", { sessionId, interactionId: "act_1" }),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual(["fulfilled", "fulfilled"]);
      expect(answers.map((answer) => (answer as PromiseFulfilledResult<unknown>).value)).toEqual([
        { approved: false, interactionId: "act_1", vote: { needed: 2 } },
        { approved: false, interactionId: "act_1", vote: { needed: 2 } },
      ]);
      expect((await waitForTerminal(annOnA, sessionId, turnId)).type).toBe("turn.completed");
      expect(payloadsOf(annOnA.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
      expect(payloadsOf(annOnA.eventsOf(sessionId), "tool.result")).toEqual([expect.objectContaining({ isError: false, output: '{"a":4}' })]);
      const receipt = await auditedReceipt(auditFile, sessionId);
      const votes = receipt.steps.filter((s: { step: string }) => s.step === "vote").map((s: { approver: string }) => s.approver);
      expect([...votes].sort()).toEqual(["ben", "cat"]);
      expect(steps(receipt).filter((s) => s.step !== "vote")).toEqual([
        { step: "proposed" },
        { step: "asked", whom: "the session's clients; decided by principals ann, ben, cat, 2 distinct approvers" },
        { step: "decided", by: "client", outcome: "approved", detail: "once", approvers: votes },
        { step: "executed", digest: receipt.digest },
        { step: "returned", ok: true },
      ]);
    },
    TEST_TIMEOUT,
  );
});
