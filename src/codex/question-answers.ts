/** The answers a client gave to question `questionId` of item/tool/requestUserInput, as one text. */
export function answerText(result: unknown, questionId: string): string | undefined {
  const answers = (result as { answers?: Record<string, { answers?: unknown }> } | undefined)?.answers?.[questionId]?.answers;
  if (!Array.isArray(answers) || !answers.every((a) => typeof a === "string")) return undefined;
  return answers.join("\n");
}

/**
 * A Codex client's answer to an ask_user question in the core's words: the answer text, or
 * `declined` when the result leaves the question unanswered (no answer for it, or an empty list:
 * what Codex itself sends for a question dismissed or cancelled, `answers: {}`). Anything that is
 * not a result object (an error answer, none) is no answer: the others or the deadline decide.
 */
export function questionOutcome(result: unknown, questionId: string): { response: string } | { declined: string } | undefined {
  const answers = (result as { answers?: unknown } | undefined)?.answers;
  if (typeof answers !== "object" || answers === null) return undefined;
  const given = (answers as Record<string, { answers?: unknown } | undefined>)[questionId]?.answers;
  if (given === undefined || (Array.isArray(given) && given.length === 0)) return { declined: "the user gave no answer" };
  const response = answerText(result, questionId);
  return response === undefined ? undefined : { response };
}
