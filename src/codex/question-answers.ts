/** The answers a client gave to question `questionId` of item/tool/requestUserInput, as one text. */
export function answerText(result: unknown, questionId: string): string | undefined {
  const answers = (result as { answers?: Record<string, { answers?: unknown }> } | undefined)?.answers?.[questionId]?.answers;
  if (!Array.isArray(answers) || !answers.every((a) => typeof a === "string")) return undefined;
  return answers.join("\n");
}
