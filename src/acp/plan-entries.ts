import type { PlanEntry } from "../../generated/acp-v1.js";

/** List markers and checkboxes a Markdown plan step may start with. */
const MARKER = /^(?:[-*+]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?/;

/**
 * `submit_plan`'s Markdown as ACP plan entries: one per non-empty line (list markers and
 * checkboxes dropped, headings kept as text), all pending until the work happens.
 */
export function planEntries(plan: string): PlanEntry[] {
  return plan
    .split("\n")
    .map((line) => line.trim().replace(MARKER, "").trim())
    .filter((line) => line.length > 0)
    .map((content) => ({ content, priority: "medium", status: "pending" }));
}
