import type { ApprovalScope, InteractionRecord } from "../../../generated/ask-v1.0.js";
import type { InteractionKindName, SharedInteraction } from "../../store/interactions.js";
import { notPendingInput } from "./ask-user-tool.js";
import type { Deciders } from "../../store/session-roles.js";
import type { SessionPrincipal } from "../session-principal.js";
import { SessionError } from "../session-error.js";
import { decidersText, type ApprovalAnswered, type ApprovalDecision, type ApprovalNeeds, type Heard } from "./approval-votes.js";
import { checkedScope, notPendingApproval } from "./command-tools.js";
import { InteractionError } from "./interaction-error.js";
import type { InteractionShare } from "./interaction-share.js";
import { NO_PENDING_PLAN, notPendingPlan } from "./submit-plan-tool.js";

/** A plan waiting for approval: its interaction id and its text. */
export interface PendingPlan {
  readonly id: string;
  readonly plan: string;
}

/** The approvals held on this replica, answered here directly (a vote is counted where the call is held). */
export interface HeldApprovals {
  /** One answer from `principal` to `interactionId`; undefined when it is not pending here. */
  hear(interactionId: string, decision: ApprovalDecision, principal: SessionPrincipal | undefined): Promise<Heard> | undefined;
  /** Who may decide `interactionId`; undefined when it is not pending here. */
  decidersOf(interactionId: string): Deciders | undefined;
}

/**
 * The clients' side of one session's interactions, on any replica: what is pending, read from the
 * interaction store, and answers, which win or lose there (first answer wins). The winning answer
 * is carried out by the replica holding the call. Errors are the ones the replica holding the
 * calls gives, word for word: an answer to an interaction already resolved is "not pending".
 */
export class SharedAnswers {
  constructor(
    private readonly sessionId: string,
    private readonly share: InteractionShare,
    private readonly held?: HeldApprovals,
    /** Whether a principal may decide an approval with these deciders (the session's roles): a vote the holder would not count is refused here in the holder's words. */
    private readonly mayDecide?: (principal: SessionPrincipal, deciders: Deciders) => Promise<boolean>,
  ) {}

  /**
   * Who may decide the pending approval `interactionId`, on any replica: the deciders of the
   * policy rule that `require`d it, or "any" (anyone whose role lets it answer) for one no rule
   * names them for, and for an id that is not a pending approval. Ask SessionRoles.mayDecide with it.
   */
  async decidersOf(interactionId: string): Promise<Deciders> {
    const here = this.held?.decidersOf(interactionId);
    if (here) return here;
    const shared = (await this.pending()).find((i) => i.id === interactionId && i.kind === "approval");
    return (shared?.data as { needs?: ApprovalNeeds } | undefined)?.needs?.deciders ?? "any";
  }

  /** What the `require` rule of the pending approval `interactionId` asks (its deciders, its count), on any replica; undefined for one no rule requires, or an id that is not pending. */
  async needsOf(interactionId: string): Promise<ApprovalNeeds | undefined> {
    const shared = (await this.pending()).find((i) => i.id === interactionId && i.kind === "approval");
    return (shared?.data as { needs?: ApprovalNeeds } | undefined)?.needs;
  }

  /** interaction/list: pending approvals and user-input requests, oldest first (plans are resolved with plan/* and not listed). */
  async list(): Promise<InteractionRecord[]> {
    return (await this.pending()).flatMap((i) => (i.record ? [i.record as InteractionRecord] : []));
  }

  /** Plans proposed and not yet decided, oldest first, with their text (for a client that joins while one waits). */
  async plans(): Promise<PendingPlan[]> {
    return (await this.pending()).flatMap((i) => (i.kind === "plan" && typeof i.data === "string" ? [{ id: i.id, plan: i.data }] : []));
  }

  /**
   * An approval's answer from `principal` (none: a caller without one), and what it came to. Under
   * a `require` rule it is a vote: accepted as one while more approvers are needed (the approval
   * stays pending), and refused (`forbidden`) from a principal the rule does not let decide.
   */
  async approve(interactionId: string, scope: ApprovalScope = "once", principal?: SessionPrincipal): Promise<ApprovalAnswered> {
    await this.expect(interactionId, "approval", notPendingApproval);
    const checked = checkedScope(scope);
    return this.answerApproval(interactionId, { action: "approve", scope: checked }, principal);
  }

  async reject(interactionId: string, feedback?: string, principal?: SessionPrincipal): Promise<ApprovalAnswered> {
    return this.answerApproval(interactionId, { action: "reject", ...(feedback ? { feedback } : {}) }, principal);
  }

  /** interaction/approve-all: how many this answer decided (votes that did not decide one are not counted). */
  async approveAll(scope: ApprovalScope = "once", principal?: SessionPrincipal): Promise<number> {
    const checked = checkedScope(scope);
    return this.answerEvery({ action: "approve", scope: checked }, principal);
  }

  async rejectAll(feedback?: string, principal?: SessionPrincipal): Promise<number> {
    return this.answerEvery({ action: "reject", ...(feedback ? { feedback } : {}) }, principal);
  }

  /**
   * One answer to one approval, from `principal`: counted where the call is held (here directly;
   * from another replica through the store, as a vote the holder counts). True when it decided.
   */
  async vote(interactionId: string, decision: ApprovalDecision, principal: SessionPrincipal | undefined): Promise<boolean> {
    const here = this.held?.hear(interactionId, decision, principal);
    if (here) return (await here).kind === "decided";
    return (await this.answerRemotely(interactionId, decision, principal)).kind === "decided";
  }

  async respond(interactionId: string, response: string): Promise<void> {
    await this.answer(interactionId, "user_input", { action: "respond", response }, notPendingInput);
  }

  async decline(interactionId: string, reason: string): Promise<void> {
    await this.answer(interactionId, "user_input", { action: "decline", reason }, notPendingInput);
  }

  /** One plan decided by its id (the answer to a question about it, or an operator's on the inspector page); plan/approve and plan/reject decide every pending plan. */
  async decidePlan(interactionId: string, decision: { action: "approve" } | { action: "reject"; feedback?: string }): Promise<void> {
    if (!(await this.resolve(interactionId, "plan", decision))) throw new InteractionError("plan_not_found", notPendingPlan(interactionId));
  }

  async approvePlan(): Promise<void> {
    await this.answerPlans({ action: "approve" });
  }

  async rejectPlan(feedback?: string): Promise<void> {
    await this.answerPlans({ action: "reject", ...(feedback ? { feedback } : {}) });
  }

  /** Whether an approval is waiting (interaction/requestPermission as a query). */
  async approvalPending(): Promise<boolean> {
    return (await this.pending()).some((i) => i.kind === "approval");
  }

  private pending(): Promise<SharedInteraction[]> {
    return this.share.store.pending(this.share.hostKey, this.sessionId);
  }

  private resolve(interactionId: string, kind: InteractionKindName, decision: unknown): Promise<boolean> {
    return this.share.store.resolve(this.share.hostKey, this.sessionId, interactionId, [kind], decision);
  }

  /** Refuses an interaction that is not pending before its parameters are looked at (the order of checks of the replica holding the call). */
  private async expect(interactionId: string, kind: InteractionKindName, notPending: (id: string) => string): Promise<void> {
    if (!(await this.pending()).some((i) => i.id === interactionId && i.kind === kind)) throw new InteractionError("interaction_not_found", notPending(interactionId));
  }

  private async answer(interactionId: string, kind: InteractionKindName, decision: unknown, notPending: (id: string) => string): Promise<void> {
    if (!(await this.resolve(interactionId, kind, decision))) throw new InteractionError("interaction_not_found", notPending(interactionId));
  }

  /**
   * One answer to an approval held on another replica. Under a `require` rule it is a vote
   * (`sent`): queued for the holder to count while the approval stays pending, so no other
   * client's answer is ever turned away while the approval is open; the holder's count decides.
   * Otherwise the first answer wins (`decided`). `not pending` when it is not.
   */
  private async answerRemotely(interactionId: string, decision: ApprovalDecision, principal: SessionPrincipal | undefined): Promise<ApprovalAnswered | { kind: "not pending" } | { kind: "refused"; deciders: string }> {
    const answer = { ...decision, voter: principal ?? null } satisfies ApprovalDecision;
    const shared = (await this.pending()).find((i) => i.id === interactionId && i.kind === "approval");
    const needs = (shared?.data as { needs?: ApprovalNeeds } | undefined)?.needs;
    if (!shared) return { kind: "not pending" };
    if (!needs) return { kind: (await this.resolve(interactionId, "approval", answer)) ? "decided" : "not pending" };
    if (principal && this.mayDecide && !(await this.mayDecide(principal, needs.deciders).catch(() => false))) return { kind: "refused", deciders: decidersText(needs.deciders) };
    return (await this.share.store.vote(this.share.hostKey, this.sessionId, interactionId, ["approval"], answer)) ? { kind: "sent", need: needs.count } : { kind: "not pending" };
  }

  private async answerApproval(interactionId: string, decision: ApprovalDecision, principal: SessionPrincipal | undefined): Promise<ApprovalAnswered> {
    const here = this.held?.hear(interactionId, decision, principal);
    const heard = here ? await here : await this.answerRemotely(interactionId, decision, principal);
    if (heard.kind === "refused") {
      const who = principal ? `principal '${principal.tokenId}'` : "a caller without a principal (no token)";
      throw new SessionError("forbidden", `${who} may not decide approval ${interactionId}: it is decided by ${heard.deciders}`, {
        sessionId: this.sessionId,
        ...(principal ? { principal: principal.tokenId } : {}),
        action: "answer",
      });
    }
    if (heard.kind === "ignored" || heard.kind === "not pending") throw new InteractionError("interaction_not_found", notPendingApproval(interactionId));
    return heard.kind === "vote" ? { kind: "vote", have: heard.have, need: heard.need } : heard;
  }

  private async answerEvery(decision: ApprovalDecision, principal: SessionPrincipal | undefined): Promise<number> {
    let decided = 0;
    for (const interaction of await this.pending()) {
      if (interaction.kind === "approval" && (await this.vote(interaction.id, decision, principal))) decided++;
    }
    return decided;
  }

  private async answerPlans(decision: unknown): Promise<void> {
    const plans = (await this.pending()).filter((i) => i.kind === "plan");
    if (plans.length === 0) throw new InteractionError("plan_not_found", NO_PENDING_PLAN);
    for (const plan of plans) await this.resolve(plan.id, "plan", decision);
  }
}
