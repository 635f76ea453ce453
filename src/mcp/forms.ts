import type { ElicitationCreateParams } from "../../generated/mcp-v2025-11-25.js";
import type { InteractionRequestPermissionParams, InteractionRequestUserInputParams } from "../../generated/ask-v1.0.js";
import { ProtocolValidators } from "../validation/validator.js";
import { offersSessionScope } from "../bridge/interactions/index.js";

/**
 * The forms (elicitation/create, form mode) that put a session's interactions to an MCP client,
 * and how each answer reads. Only an accepted form whose choice says so approves: a decline, a
 * cancel, an error or an answer that does not fit the form refuses — consent is never inferred.
 * No choice is preselected, so accepting the form without choosing is not possible.
 */

const decision = (approvals: Array<{ const: string; title: string }>) => ({
  type: "string" as const,
  title: "Decision",
  oneOf: [...approvals, { const: "reject", title: "Reject" }],
});
const feedback = { type: "string" as const, title: "Feedback", description: "Why, when rejecting (passed to the agent)." };

export function permissionForm(params: InteractionRequestPermissionParams): ElicitationCreateParams {
  const args = params.input === undefined ? "" : ` with ${JSON.stringify(params.input)}`;
  return {
    mode: "form",
    message: `Tau session ${params.sessionId ?? ""} wants to run ${params.toolName}${args}. ${params.reason ?? ""}`.replace(/\s+$/, ""),
    requestedSchema: {
      type: "object",
      properties: {
        // "For the rest of the session" only where the decision may hold beyond this call.
        decision: decision([
          { const: "approve", title: "Allow once" },
          ...(offersSessionScope(params) ? [{ const: "approve_for_session", title: "Allow for the rest of the session" }] : []),
        ]),
        feedback,
      },
      required: ["decision"],
    },
  };
}

export function planForm(sessionId: string, plan: string): ElicitationCreateParams {
  return {
    mode: "form",
    message: `Tau session ${sessionId} proposes a plan:\n\n${plan}`,
    requestedSchema: { type: "object", properties: { decision: decision([{ const: "approve", title: "Approve the plan" }]), feedback }, required: ["decision"] },
  };
}

export function questionForm(params: InteractionRequestUserInputParams): ElicitationCreateParams {
  const suggested = params.options?.length ? `Suggested answers: ${params.options.join(", ")}` : undefined;
  return {
    mode: "form",
    message: params.prompt,
    requestedSchema: {
      type: "object",
      properties: { answer: { type: "string", title: "Answer", ...(suggested ? { description: suggested } : {}) } },
      required: ["answer"],
    },
  };
}

export type FormChoice =
  | { kind: "approve"; scope: "once" | "session" }
  | { kind: "reject"; feedback: string }
  | { kind: "answer"; text: string };

/** What a client's answer to one of these forms chose; an Error is the request failing. */
export function formChoice(answer: unknown): FormChoice {
  if (answer instanceof Error) return { kind: "reject", feedback: `the form could not be shown (${answer.message})` };
  if (!ProtocolValidators.shared().get("mcp").result("elicitation/create", answer, "", "server").ok) {
    return { kind: "reject", feedback: "the answer to the form did not fit the protocol" };
  }
  const { action, content } = answer as { action: string; content?: Record<string, unknown> };
  if (action !== "accept") return { kind: "reject", feedback: action === "decline" ? "the user declined" : "the user dismissed the form" };
  const chosen = content?.decision;
  const said = typeof content?.feedback === "string" && content.feedback !== "" ? content.feedback : undefined;
  if (chosen === "approve") return { kind: "approve", scope: "once" };
  if (chosen === "approve_for_session") return { kind: "approve", scope: "session" };
  if (chosen === "reject") return { kind: "reject", feedback: said ?? "rejected by the user" };
  if (typeof content?.answer === "string") return { kind: "answer", text: content.answer };
  return { kind: "reject", feedback: "the form came back without a choice" };
}
