import { draft } from "../event-draft.js";
import { errorReply, textReply, type ToolCall } from "./tool-call.js";
import type { GatewayTool, ToolContext } from "./gateway-tool.js";
import { SUBMIT_PLAN_TOOL } from "./tool-names.js";
import { InteractionError } from "./interaction-error.js";
import type { InteractionKind, Pending } from "./pending-interactions.js";

/**
 * `submit_plan {plan}` (DESIGN §4.4): the model proposes a plan (`plan.proposed`); plan/approve or
 * plan/reject settles every pending plan, and the tool result tells the model which. An approved
 * plan also unlocks the command tools of a session in mode `plan`.
 */

export const SUBMIT_PLAN_PARAMETERS = {
  type: "object",
  properties: {
    plan: { type: "string", minLength: 1, description: "The plan, in Markdown." },
  },
  required: ["plan"],
  additionalProperties: false,
} as const;

/** What the model is told about the tool. */
export const SUBMIT_PLAN_DEFINITION = {
  name: SUBMIT_PLAN_TOOL,
  description:
    "Submit a plan for the user to approve before you act on it. The result says whether the user approved or rejected it, with their feedback.",
  parameters: SUBMIT_PLAN_PARAMETERS,
};

/** What was decided about a plan (plain JSON: it may be decided on another replica). */
type PlanDecision = { action: "approve" } | { action: "reject"; feedback?: string };

/** The error when no plan is pending. */
export const NO_PENDING_PLAN = "no plan is pending";

/** The error when one plan, named by its id, is not pending. */
export const notPendingPlan = (interactionId: string) => `no pending plan ${interactionId}`;

/** A plan's interaction keeps the plan text. */
const PLAN: InteractionKind<string> = {
  idKind: "plan",
  created: (p) => draft("plan.proposed", { id: p.id, plan: p.data }),
  ended: (p, status, reason) => draft("plan.rejected", { id: p.id, plan: p.data, status, reason }),
  expiredReply: (_p, reason) => errorReply(`the plan was not approved: ${reason}; do not carry it out`),
};

export class SubmitPlanTool implements GatewayTool {
  readonly parameters = SUBMIT_PLAN_PARAMETERS;
  private approvedOnce = false;

  constructor(private readonly context: ToolContext) {
    context.pending.register(PLAN, (p, decision) => this.carryOut(p, decision));
  }

  /** A plan has been approved in this session. */
  get approved(): boolean {
    return this.approvedOnce;
  }

  start(call: ToolCall, args: unknown): void {
    this.context.pending.open(PLAN, call, (args as { plan: string }).plan);
  }

  /** plan/approve. */
  approve(): void {
    for (const p of this.pendingPlans()) void this.context.pending.decide(p, { action: "approve" } satisfies PlanDecision);
  }

  /** plan/reject. */
  reject(feedback?: string): void {
    for (const p of this.pendingPlans()) void this.context.pending.decide(p, { action: "reject", ...(feedback ? { feedback } : {}) } satisfies PlanDecision);
  }

  /** The decision that won; anything but an approval rejects (consent is never inferred). */
  private carryOut(p: Pending<string>, decision: unknown): void {
    const { action, feedback } = (decision ?? {}) as Partial<Record<"action" | "feedback", unknown>>;
    if (action === "approve") {
      this.approvedOnce = true;
      this.context.pending.resolve(p, {
        event: draft("plan.approved", { id: p.id, plan: p.data }),
        reply: textReply("The user approved the plan. Carry it out now."),
      });
      return;
    }
    const said = typeof feedback === "string" && feedback ? ` Their feedback: ${feedback}` : "";
    this.context.pending.resolve(p, {
      event: draft("plan.rejected", { id: p.id, plan: p.data, ...(typeof feedback === "string" && feedback ? { feedback } : {}) }),
      reply: textReply(`The user rejected the plan.${said} Do not carry it out; revise it and submit it again, or ask the user how to proceed.`),
    });
  }

  private pendingPlans(): Array<Pending<string>> {
    const plans = this.context.pending.all(PLAN);
    if (plans.length === 0) throw new InteractionError("plan_not_found", NO_PENDING_PLAN);
    return plans;
  }
}
