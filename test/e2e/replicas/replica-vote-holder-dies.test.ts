import { describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { HOLDER_GONE } from "../../../src/bridge/interactions/pending-interactions.js";
import { rpcError, type AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { CALL_MARK, markRuns, markToolsFile } from "../../support/mark-tool.js";
import { answerStream, leasesOwned, until } from "../../support/replica-set.js";
import {
  approvalOnEveryReplica,
  auditedReceipt,
  listedInteractions,
  receiptSteps,
  startVoteReplicas,
  VOTE_TOKENS,
  voteApprovers,
  voterOn,
  type VoteReplicas,
} from "../../support/vote-replicas.js";

/**
 * The replica holding a consensus approval's call (`count: 2`) dies with votes queued for it in the
 * interaction store, every part a real process on a real redis-server: replica A holds the Tau host
 * and the call, every client is on B, and A is stopped (SIGSTOP) so the votes given on B wait, uncounted, for it.
 *
 * A client-tool call belongs to the Tau connection it was sent to (Tau protocol §7: calls are not
 * migrated), so when A's connection goes Tau cancels the call and the turn goes on without it. The
 * approval cannot be carried over to B, and must not be decided there as if it could: B, taking
 * the host over, ends it for every client (`approval.updated` cancelled, once), it is no longer
 * listed or answerable, no queued vote counts (neither a new approver's nor a repeat of one A had
 * counted), nothing runs, and the answer stream is left empty; B writes the call's receipt, which died
 * with A (its votes unknown). Then B holds the session's calls:
 * the next approval is decided by two distinct approvers, runs once, and its receipt lists both.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 240_000;

async function holderAndClientsOnB() {
  const { file, marker } = markToolsFile(cleanups);
  const replicas = await startVoteReplicas(cleanups, { file, tool: "mark" });
  const [ann, ben, cat] = [await voterOn(replicas.b, "ann", cleanups), await voterOn(replicas.b, "ben", cleanups), await voterOn(replicas.b, "cat", cleanups)];
  const { sessionId, turnId } = await approvalOnEveryReplica(ann, [ben, cat], CALL_MARK);
  return { ...replicas, marker, ann, ben, cat, clients: [ann, ben, cat], sessionId, turnId };
}

const approve = (c: AskTestClient, sessionId: string, interactionId = "act_1") => c.request("interaction/approve", { sessionId, interactionId });
const SENT = { approved: false, interactionId: "act_1", vote: { needed: 2 } };
const REFUSED_LOG = "Tau did not accept the tool result";

/** B holds the host once A is gone. */
async function bTakesOver({ b }: VoteReplicas) {
  await until(async () => ((await leasesOwned(b, VOTE_TOKENS.ops)) === 1 ? true : undefined), "B to take the host over", 60_000);
}

/** What every client must have seen of act_1 once B took over: the approval ended (`endedWith`), with `voted` the only counts, and the turn over with the call cancelled. */
async function expectApprovalEnded(clients: AskTestClient[], sessionId: string, turnId: string, endedWith: (payload: unknown) => void, voted: unknown[]) {
  for (const c of clients) {
    await c.waitFor(() => payloadsOf(c.eventsOf(sessionId), "approval.updated").length > 0, "act_1 to end", 60_000);
    await waitForTerminal(c, sessionId, turnId);
    const events: Event[] = c.eventsOf(sessionId);
    const ended = payloadsOf(events, "approval.updated");
    expect(ended).toHaveLength(1);
    endedWith(ended[0]);
    expect(payloadsOf(events, "approval.voted")).toEqual(voted);
    expect(payloadsOf<{ name: string; isError: boolean }>(events, "tool.result").map((r) => ({ name: r.name, isError: r.isError }))).toEqual([{ name: "mark", isError: true }]);
    expectContiguous(events);
    expectOneTerminalPerTurn(events);
  }
}

/** The approval is gone everywhere: not listed, a later answer is not pending, and the votes left in the answer stream were taken and dropped. */
async function expectGone(replicas: VoteReplicas, clients: AskTestClient[], sessionId: string) {
  await until(async () => {
    const state = await answerStream(replicas.set);
    return state.length === 0 && state.unacknowledged === 0 ? state : undefined;
  }, "the answer stream to be empty", 60_000);
  for (const c of clients) expect(await listedInteractions(c, sessionId)).toEqual([]);
  expect(await rpcError(approve(clients[0]!, sessionId))).toMatchObject({ code: -32006 });
}

/** B now holds the session's calls: the next approval is decided by two distinct approvers there, runs once, and B's receipt lists both votes and the digest. */
async function nextApprovalDecidedOnB(t: Awaited<ReturnType<typeof holderAndClientsOnB>>) {
  const { ann, ben, cat, sessionId, marker } = t;
  const { turnId } = await ann.request("session/send", { sessionId, content: CALL_MARK });
  await cat.waitFor(() => payloadsOf<{ id: string }>(cat.eventsOf(sessionId), "approval.required").some((p) => p.id === "act_2"), "act_2 on B", 60_000);
  expect(await approve(ben, sessionId, "act_2")).toEqual({ approved: false, interactionId: "act_2", vote: { approvals: 1, needed: 2 } });
  expect(await approve(cat, sessionId, "act_2")).toEqual({ approved: true, interactionId: "act_2" });
  await waitForTerminal(ann, sessionId, turnId);
  expect(markRuns(marker)).toBe(1);
  const receipt = await auditedReceipt(t.auditFile, sessionId, (r) => r.interactionId === "act_2");
  expect(voteApprovers(receipt)).toEqual(["ben", "cat"]);
  expect(receiptSteps(receipt).filter((s) => s.step === "decided" || s.step === "executed")).toEqual([
    { step: "decided", by: "client", outcome: "approved", detail: "once", approvers: ["ben", "cat"] },
    { step: "executed", digest: receipt.digest },
  ]);
}

describe("the replica holding a consensus approval's call dies with votes queued for it", () => {
  it(
    "killed (SIGKILL) after counting ben and before counting ben again and cat: B ends the approval for everyone instead of deciding it for a call Tau cancelled; no queued vote counts, nothing runs",
    async () => {
      const t = await holderAndClientsOnB();
      const { a, ben, cat, clients, sessionId, turnId, marker } = t;
      // A counts ben's vote: one of two.
      expect(await approve(ben, sessionId)).toEqual(SENT);
      const counted = { id: "act_1", approver: "ben", approvals: 1, needed: 2 };
      for (const c of clients) await c.waitFor(() => payloadsOf(c.eventsOf(sessionId), "approval.voted").length === 1, "ben's vote counted by A");

      a.child.kill("SIGSTOP");
      try {
        // Queued for A, which never counts them: ben again (a repeat), and cat (who would have made two).
        expect(await approve(ben, sessionId)).toEqual(SENT);
        expect(await approve(cat, sessionId)).toEqual(SENT);
      } finally {
        a.child.kill("SIGKILL");
      }
      expect(await a.exit).toEqual({ code: null, signal: "SIGKILL" });
      await bTakesOver(t);

      await expectApprovalEnded(clients, sessionId, turnId, (ended) => expect(ended).toEqual({ id: "act_1", status: "cancelled", reason: HOLDER_GONE }), [counted]);
      await expectGone(t, clients, sessionId);
      // Nothing counted after A stopped, in any order the queued votes were taken in.
      for (const c of clients) expect(payloadsOf(c.eventsOf(sessionId), "approval.voted")).toEqual([counted]);
      expect(markRuns(marker)).toBe(0);
      // B sent Tau no result for the call Tau had cancelled (one would be refused).
      expect(t.b.stderr()).not.toContain(REFUSED_LOG);
      // A's receipt died with it; B, ending the approval, writes the call's from what the store kept (no votes: A's count went with A).
      const receipt = await auditedReceipt(t.auditFile, sessionId, (r) => r.interactionId === "act_1");
      expect(receipt).toMatchObject({ tool: "mark", policyVersion: "replica-votes-1", rule: { name: "two-of-us", index: 0 }, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
      expect(receiptSteps(receipt)).toEqual([
        { step: "proposed" },
        { step: "asked", whom: "the session's clients; decided by principals ann, ben, cat, 2 distinct approvers" },
        { step: "returned", ok: false, error: `cancelled: ${HOLDER_GONE} (written by the replica that took the Tau host over: the votes counted on the one that held the call are not known)` },
      ]);

      await nextApprovalDecidedOnB(t);
    },
    TEST_TIMEOUT,
  );

  it(
    "stopped cleanly (SIGTERM) with ben's vote queued: A ends the approval itself as it shuts down; the vote counts at most once, nothing runs, and B holds the next approval",
    async () => {
      const t = await holderAndClientsOnB();
      const { a, ben, clients, sessionId, turnId, marker } = t;
      a.child.kill("SIGSTOP");
      try {
        expect(await approve(ben, sessionId)).toEqual(SENT);
      } finally {
        // The stop request reaches A before it runs again: the vote waits for a replica that is shutting down.
        a.child.kill("SIGTERM");
        a.child.kill("SIGCONT");
      }
      expect(await a.exit).toEqual({ code: 0, signal: null });
      await bTakesOver(t);

      // A may have counted ben's vote in the moment before it ended the approval: once at most.
      await clients[0]!.waitFor(() => payloadsOf(clients[0]!.eventsOf(sessionId), "approval.updated").length > 0, "act_1 to end", 60_000);
      const votedSeen = payloadsOf(clients[0]!.eventsOf(sessionId), "approval.voted");
      expect([[], [{ id: "act_1", approver: "ben", approvals: 1, needed: 2 }]]).toContainEqual(votedSeen);
      await expectApprovalEnded(clients, sessionId, turnId, (ended) => expect(ended).toEqual({ id: "act_1", status: "cancelled", reason: "the gateway is shutting down" }), votedSeen);
      await expectGone(t, clients, sessionId);
      expect(markRuns(marker)).toBe(0);
      // A's receipt of the call says it was cancelled, with ben's vote in it only if A counted it.
      const receipt = await auditedReceipt(t.auditFile, sessionId, (r) => r.interactionId === "act_1");
      expect(voteApprovers(receipt)).toEqual(votedSeen.length ? ["ben"] : []);
      expect(receiptSteps(receipt).at(-1)).toEqual({ step: "returned", ok: false, error: "cancelled: the gateway is shutting down" });

      await nextApprovalDecidedOnB(t);
    },
    TEST_TIMEOUT,
  );
});
