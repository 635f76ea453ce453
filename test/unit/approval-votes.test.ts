import { describe, expect, it } from "vitest";
import { ApprovalVotes, decidersText, UNNAMED_APPROVER, type ApprovalNeeds } from "../../src/bridge/interactions/approval-votes.js";
import { SessionReceipts } from "../../src/bridge/interactions/policy/receipts.js";
import { SessionRoles } from "../../src/bridge/session-roles.js";
import { MemorySessionRoles } from "../../src/store/session-roles.js";

/**
 * The votes on a `require`d approval, with the session's real roles: only the deciders the rule
 * names count, each principal once; the count decides, a rejection decides at once; every counted
 * vote is in the call's receipt, and a refused one is not.
 */

const SESSION = "ses_votes";
const principal = (tokenId: string, sessionRole?: "controller" | "observer") => ({ tokenId, ...(sessionRole ? { sessionRole } : {}) });

async function setup() {
  const roles = new SessionRoles(new MemorySessionRoles());
  await roles.created(SESSION, principal("own"));
  const receipts = new SessionReceipts(undefined);
  receipts.propose({ sessionId: SESSION, callId: "call_1", tool: "t", digest: "sha256:00", policyVersion: "1" });
  const logged: string[] = [];
  const votes = new ApprovalVotes({ sessionId: SESSION, receipts, mayDecide: (p, deciders) => roles.mayDecide(SESSION, p, deciders), log: (_level, message) => void logged.push(message) });
  const votesInReceipt = () => receipts.list()[0]!.steps.filter((step) => step.step === "vote").map((step) => step.step === "vote" && [step.approver, step.approve]);
  return { votes, votesInReceipt, logged };
}

const needs = (over: Partial<ApprovalNeeds>): ApprovalNeeds => ({ deciders: "any", count: 1, onDeadline: "deny", ...over });

describe("approval votes", () => {
  it("count 2 of the named principals: a vote, a repeat, a refusal, then the decision", async () => {
    const { votes, votesInReceipt, logged } = await setup();
    const rule = needs({ deciders: { principals: ["ann", "ben"], roles: [] }, count: 2 });
    expect(await votes.cast("act_1", "call_1", rule, principal("ann"), true)).toEqual({ kind: "vote", approver: "ann", have: 1, need: 2 });
    expect(await votes.cast("act_1", "call_1", rule, principal("ann"), true)).toEqual({ kind: "vote", approver: "ann", have: 1, need: 2, repeat: true });
    expect(await votes.cast("act_1", "call_1", rule, principal("cid"), true)).toEqual({ kind: "refused", deciders: "principals ann, ben" });
    expect(logged).toContain("approval vote refused: principal 'cid' may not decide act_1 (principals ann, ben)");
    expect(await votes.cast("act_1", "call_1", rule, principal("ben"), true)).toEqual({ kind: "decided", approved: true, approvers: ["ann", "ben"] });
    expect(votesInReceipt()).toEqual([
      ["ann", true],
      ["ben", true],
    ]);
  });

  it("a rejection by an allowed approver decides at once; later votes count for nothing", async () => {
    const { votes, votesInReceipt } = await setup();
    const rule = needs({ count: 3 });
    await votes.cast("act_1", "call_1", rule, principal("ann"), true);
    expect(await votes.cast("act_1", "call_1", rule, principal("ben"), false)).toEqual({ kind: "decided", approved: false, approvers: ["ben"] });
    expect(await votes.cast("act_1", "call_1", rule, principal("cid"), true)).toEqual({ kind: "ignored" });
    // An answer that comes once the approval has ended (withdrawn, decided elsewhere) is no vote either.
    expect(await votes.cast("act_2", "call_1", rule, principal("ann"), false, () => false)).toEqual({ kind: "ignored" });
    expect(votesInReceipt()).toEqual([
      ["ann", true],
      ["ben", false],
    ]);
  });

  it("holds to the session's roles: an observer never decides; a rule's roles are session roles", async () => {
    const { votes } = await setup();
    expect(await votes.cast("act_1", "call_1", needs({}), principal("obs", "observer"), true)).toMatchObject({ kind: "refused" });
    const owners = needs({ deciders: { principals: [], roles: ["owner"] } });
    expect(await votes.cast("act_2", "call_1", owners, principal("ctl"), true)).toMatchObject({ kind: "refused", deciders: "roles owner" });
    expect(await votes.cast("act_2", "call_1", owners, principal("own"), true)).toEqual({ kind: "decided", approved: true, approvers: ["own"] });
  });

  it("never counts an answer without a principal toward named deciders or several approvers; alone, it decides a rule that needs neither", async () => {
    const { votes, votesInReceipt, logged } = await setup();
    const two = needs({ count: 2 });
    expect(await votes.cast("act_1", "call_1", two, undefined, true)).toEqual({ kind: "refused", deciders: "any controller" });
    expect(logged).toContain("approval vote refused: a caller without a principal may not decide act_1 (any controller, 2 distinct approvers)");
    // Nor does it veto: it is no decider at all.
    expect(await votes.cast("act_1", "call_1", two, undefined, false)).toEqual({ kind: "refused", deciders: "any controller" });
    expect(await votes.cast("act_1", "call_1", two, principal("ann"), true)).toEqual({ kind: "vote", approver: "ann", have: 1, need: 2 });
    expect(await votes.cast("act_1", "call_1", two, principal("ben"), true)).toEqual({ kind: "decided", approved: true, approvers: ["ann", "ben"] });
    const leads = needs({ deciders: { principals: ["lead"], roles: [] } });
    expect(await votes.cast("act_2", "call_1", leads, undefined, true)).toEqual({ kind: "refused", deciders: "principals lead" });
    const owners = needs({ deciders: { principals: [], roles: ["owner"] } });
    expect(await votes.cast("act_3", "call_1", owners, undefined, true)).toEqual({ kind: "refused", deciders: "roles owner" });
    expect(await votes.cast("act_4", "call_1", needs({}), undefined, true)).toEqual({ kind: "decided", approved: true, approvers: [UNNAMED_APPROVER] });
    expect(votesInReceipt()).toEqual([
      ["ann", true],
      ["ben", true],
      [UNNAMED_APPROVER, true],
    ]);
  });

  it("says who decides as receipts and logs do", () => {
    expect(decidersText("any")).toBe("any controller");
    expect(decidersText({ principals: ["lead"], roles: ["owner"] })).toBe("principals lead; roles owner");
  });
});
