import { describe, expect, it } from "vitest";
import { rpcError } from "../../support/ask-client.js";
import { payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { approvalOnEveryReplica, auditedReceipt, listedInteractions as listed, receiptSteps as steps, startVoteReplicas, voteApprovers, voterOn, type Voter } from "../../support/vote-replicas.js";

/**
 * Votes on a consensus rule (`count: 2`) given on two replicas sharing one redis-server, every part
 * a real process: replica A holds the Tau host (and the call); a vote given on B travels through the
 * interaction store to A, which counts it. The approval stays pending while votes are counted, so a
 * vote is never turned away while the approval is open (not even one given at the same moment as
 * another); the call runs once, and A's audit file lists every vote and the digest that ran.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 240_000;
const client = (replica: ServingCli, who: Voter) => voterOn(replica, who, cleanups);

describe("votes on a consensus rule given on two replicas sharing Redis", () => {
  it(
    "one vote on B (counted by A, the approval still pending everywhere) and one on A decide; the call runs once and the audit lists both votes",
    async () => {
      const { a, b, auditFile } = await startVoteReplicas(cleanups);
      const annOnA = await client(a, "ann");
      const benOnB = await client(b, "ben");
      const devOnB = await client(b, "dev");
      const { sessionId, turnId } = await approvalOnEveryReplica(annOnA, [benOnB, devOnB], '/tool echo-json {"a":3}\nDone');

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
      expect(voteApprovers(receipt)).toEqual(["ben", "ann"]);
      expect(receipt.steps.find((s: { step: string }) => s.step === "decided").approvers).toEqual(["ben", "ann"]);
    },
    TEST_TIMEOUT,
  );

  it(
    "two votes given on B at the same moment are both taken (neither is told the approval is not pending) and decide; the call runs once",
    async () => {
      const { a, b, auditFile } = await startVoteReplicas(cleanups);
      const annOnA = await client(a, "ann");
      const benOnB = await client(b, "ben");
      const catOnB = await client(b, "cat");
      const { sessionId, turnId } = await approvalOnEveryReplica(annOnA, [benOnB, catOnB], '/tool echo-json {"a":4}\nDone');

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
      const votes = voteApprovers(receipt);
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
