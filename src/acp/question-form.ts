import type { ElicitationCreateParams } from "../../generated/acp-v1.js";
import type { UserInputDetails } from "../../generated/ask-v1.0.js";
import { ProtocolValidators } from "../validation/validator.js";

/**
 * `ask_user` as a form elicitation (protocol §10): one free-text answer, with the model's suggested
 * answers offered in its description (the tool lets the user answer freely, so they are not a
 * closed list). What the answer means for the question: the text, or why there is none.
 */

export type QuestionAnswer = { answered: string } | { unanswered: string };

const ANSWER = "answer";

export function questionForm(sessionId: string, toolCallId: string | undefined, question: UserInputDetails): ElicitationCreateParams {
  const suggestions = question.options?.length ? `Suggested answers: ${question.options.join(" / ")}` : undefined;
  return {
    sessionId,
    ...(toolCallId ? { toolCallId } : {}),
    mode: "form",
    message: question.prompt,
    requestedSchema: {
      type: "object",
      properties: { [ANSWER]: { type: "string", title: "Answer", ...(suggestions ? { description: suggestions } : {}) } },
      required: [ANSWER],
    },
  };
}

export function questionAnswer(result: unknown): QuestionAnswer {
  const checked = ProtocolValidators.shared().get("acp").result("elicitation/create", result, "", "server");
  if (!checked.ok) return { unanswered: "the answer did not fit the protocol" };
  const { action, content } = result as { action: string; content?: Record<string, unknown> | null };
  if (action === "decline") return { unanswered: "the user declined to answer" };
  if (action === "cancel") return { unanswered: "the user dismissed the question" };
  if (action !== "accept") return { unanswered: `the editor answered ${JSON.stringify(action)}` };
  const answer = content?.[ANSWER];
  return typeof answer === "string" && answer.trim() !== "" ? { answered: answer } : { unanswered: "the user gave no answer" };
}
