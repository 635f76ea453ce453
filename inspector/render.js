// Words and numbers the inspector page shows, with no DOM.

/** "12 ms", "1.4 s", "3 min". */
export function formatDuration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min`;
  return `${Math.floor(ms / 3_600_000)} h`;
}

/** The verdict as the log shows it: the status, then each issue as `pointer: message`. */
export function verdictText(verdict) {
  if (verdict.status === "valid") return "valid";
  const issues = verdict.issues.map((issue) => `${issue.pointer || "/"}: ${issue.message}`);
  return [verdict.status, ...issues].join(" — ");
}

/** How long a call may wait before the connections list marks it as hanging. */
export const HUNG_AFTER_MS = 30_000;

/** "in" for what a client sent, "out" for what the gateway sent it (the filter's `dir:` words); "?" for a bare transcript line. */
export const directionWord = (direction) => (direction === "client" ? "in" : direction === "server" ? "out" : "?");

/** The command a client's CI runs on a downloaded transcript (its header names the dialect). */
export function ciCommand(connectionId) {
  return `npx tau-gateway validate --format github ${connectionId}.jsonl`;
}
