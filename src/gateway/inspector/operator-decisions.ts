import type { ApprovalScope } from "../../../generated/ask-v1.0.js";
import { InteractionError } from "../../bridge/interactions/interaction-error.js";
import { isInteractionIdOf } from "../../bridge/interactions/interaction-ids.js";
import type { ApprovalAnswered, VoteCount } from "../../bridge/interactions/approval-votes.js";
import type { SharedAnswers } from "../../bridge/interactions/shared-answers.js";
import type { SessionPrincipal } from "../../bridge/session-principal.js";

/**
 * An operator's answer to a session's approval or question, given on the inspector page. It goes
 * through the session's shared answers, the same code an Ask client's interaction/approve,
 * interaction/reject or interaction/respond goes through: it wins only if it is the first answer,
 * and once it wins every client still being asked has its prompt withdrawn in its own dialect.
 */

export const OPERATOR_ACTIONS = ["approve", "reject", "respond", "decline"] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];

/** The body of `POST /inspector/api/sessions/:id/interactions/:interactionId`, as its route schema admits it. */
export interface OperatorAnswer {
  action: OperatorAction;
  /** approve: `once` (default) or `session`. */
  scope?: ApprovalScope;
  /** reject: why, passed to the agent. */
  feedback?: string;
  /** respond: the answer to the question. */
  response?: string;
  /** decline: why the question gets no answer. */
  reason?: string;
}

/** What the page shows of an answer given from it: who, what, when. */
export interface OperatorDecision extends OperatorAnswer {
  sessionId: string;
  interactionId: string;
  /** The operator's token id, or `loopback` when the gateway has no tokens. */
  by: string;
  at: string;
  /** An approve or reject that was one vote of several and did not decide: the count. */
  vote?: VoteCount;
}

/** The route's body schema (Fastify validates it with ajv before the handler runs). */
export const OPERATOR_ANSWER_SCHEMA = {
  type: "object",
  required: ["action"],
  additionalProperties: false,
  properties: {
    action: { type: "string", enum: [...OPERATOR_ACTIONS] },
    scope: { type: "string", enum: ["once", "session", "project"] },
    feedback: { type: "string", maxLength: 4000 },
    response: { type: "string", maxLength: 100_000 },
    reason: { type: "string", maxLength: 4000 },
  },
} as const;

/** Why an answer's members do not fit its action (a respond needs a response, …), or undefined when they do. */
export function answerProblem(answer: OperatorAnswer): string | undefined {
  const allowed: Record<OperatorAction, readonly (keyof OperatorAnswer)[]> = {
    approve: ["scope"],
    reject: ["feedback"],
    respond: ["response"],
    decline: ["reason"],
  };
  const extra = (Object.keys(answer) as (keyof OperatorAnswer)[]).filter((key) => key !== "action" && !allowed[answer.action].includes(key));
  if (extra.length > 0) return `body/${extra[0]} does not go with action "${answer.action}" (it takes ${allowed[answer.action].join(", ")})`;
  if (answer.action === "respond" && answer.response === undefined) return 'body/response is required with action "respond"';
  return undefined;
}

/**
 * Carries the answer out through the session's shared answers; rejects as they do (an
 * InteractionError when it is not pending). A plan (`plan_<n>`) is approved or rejected on its
 * own, as the agent's submit_plan asked; it takes no scope, and no respond or decline. An
 * approval's answer is the operator's principal's (none without tokens), held to the deciders a
 * policy rule names as any client's is: an operator is not a lead because it runs the gateway.
 * Resolves with what the answer was: the decision, or one vote of several (a `count` rule).
 */
export async function carryOut(answers: SharedAnswers, interactionId: string, answer: OperatorAnswer, principal?: SessionPrincipal): Promise<ApprovalAnswered> {
  return (await decide(answers, interactionId, answer, principal)) ?? DECIDED;
}

const DECIDED: ApprovalAnswered = { kind: "decided" };

function decide(answers: SharedAnswers, interactionId: string, answer: OperatorAnswer, principal?: SessionPrincipal): Promise<ApprovalAnswered | void> {
  if (isInteractionIdOf("plan", interactionId)) {
    if (answer.action === "approve" && answer.scope === undefined) return answers.decidePlan(interactionId, { action: "approve" });
    if (answer.action === "reject") return answers.decidePlan(interactionId, { action: "reject", ...(answer.feedback ? { feedback: answer.feedback } : {}) });
    return Promise.reject(new InteractionError("invalid_params", `a plan is approved (without a scope) or rejected; "${answer.action}"${answer.scope ? ` with scope "${answer.scope}"` : ""} does not apply to ${interactionId}`));
  }
  switch (answer.action) {
    case "approve":
      return answers.approve(interactionId, answer.scope, principal);
    case "reject":
      return answers.reject(interactionId, answer.feedback, principal);
    case "respond":
      return answers.respond(interactionId, answer.response ?? "");
    case "decline":
      return answers.decline(interactionId, answer.reason ?? "declined by the operator on the inspector page");
  }
}
