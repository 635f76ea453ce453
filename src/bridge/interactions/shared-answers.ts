import type { ApprovalScope, InteractionRecord } from "../../../generated/ask-v1.0.js";
import type { InteractionKindName, SharedInteraction } from "../../store/interactions.js";
import { notPendingInput } from "./ask-user-tool.js";
import { checkedScope, notPendingApproval } from "./command-tools.js";
import { InteractionError } from "./interaction-error.js";
import type { InteractionShare } from "./interaction-share.js";
import { NO_PENDING_PLAN, notPendingPlan } from "./submit-plan-tool.js";

/** A plan waiting for approval: its interaction id and its text. */
export interface PendingPlan {
  readonly id: string;
  readonly plan: string;
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
  ) {}

  /** interaction/list: pending approvals and user-input requests, oldest first (plans are resolved with plan/* and not listed). */
  async list(): Promise<InteractionRecord[]> {
    return (await this.pending()).flatMap((i) => (i.record ? [i.record as InteractionRecord] : []));
  }

  /** Plans proposed and not yet decided, oldest first, with their text (for a client that joins while one waits). */
  async plans(): Promise<PendingPlan[]> {
    return (await this.pending()).flatMap((i) => (i.kind === "plan" && typeof i.data === "string" ? [{ id: i.id, plan: i.data }] : []));
  }

  async approve(interactionId: string, scope: ApprovalScope = "once"): Promise<void> {
    await this.expect(interactionId, "approval", notPendingApproval);
    const checked = checkedScope(scope);
    await this.answer(interactionId, "approval", { action: "approve", scope: checked }, notPendingApproval);
  }

  async reject(interactionId: string, feedback?: string): Promise<void> {
    await this.answer(interactionId, "approval", { action: "reject", ...(feedback ? { feedback } : {}) }, notPendingApproval);
  }

  /** interaction/approve-all: how many this answer decided. */
  async approveAll(scope: ApprovalScope = "once"): Promise<number> {
    const checked = checkedScope(scope);
    return this.answerEvery("approval", { action: "approve", scope: checked });
  }

  async rejectAll(feedback?: string): Promise<number> {
    return this.answerEvery("approval", { action: "reject", ...(feedback ? { feedback } : {}) });
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

  private async answerEvery(kind: InteractionKindName, decision: unknown): Promise<number> {
    let decided = 0;
    for (const interaction of await this.pending()) {
      if (interaction.kind === kind && (await this.resolve(interaction.id, kind, decision))) decided++;
    }
    return decided;
  }

  private async answerPlans(decision: unknown): Promise<void> {
    const plans = (await this.pending()).filter((i) => i.kind === "plan");
    if (plans.length === 0) throw new InteractionError("plan_not_found", NO_PENDING_PLAN);
    for (const plan of plans) await this.resolve(plan.id, "plan", decision);
  }
}
