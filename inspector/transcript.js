// A transcript dropped on the inspector page, with no DOM: where it goes to be checked, and the
// line that sums up the verdicts the gateway sent back.

const DIALECTS = new Set(["ask", "codex", "acp", "tau"]);

/** The URL a transcript is checked at; `dialect` (ask, codex, acp, tau) forces one, "" reads it from the file. */
export function transcriptUrl(dialect) {
  return DIALECTS.has(dialect) ? `/inspector/api/transcript?dialect=${dialect}` : "/inspector/api/transcript";
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * "bad.jsonl (codex): 12 lines, 9 valid, 2 invalid, 1 sequence gap" — the counts `tau-gateway
 * validate` gives, and the gaps the inspector adds.
 * @param {string} name
 * @param {{ dialect?: string, lines: number, valid: number, invalid: number, sequenceGaps: number }} result
 */
export function transcriptSummary(name, result) {
  const parts = [plural(result.lines, "line"), `${result.valid} valid`, `${result.invalid} invalid`];
  if (result.sequenceGaps > 0) parts.push(plural(result.sequenceGaps, "sequence gap"));
  return `${name}${result.dialect ? ` (${result.dialect})` : ""}: ${parts.join(", ")}`;
}
