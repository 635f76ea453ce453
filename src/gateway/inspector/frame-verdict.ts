import type { ValidationIssue } from "../../validation/issues.js";
import type { LineVerdict } from "../../validation/transcript.js";

/**
 * The inspector's verdict on one frame, from the transcript checker `tau-gateway validate` runs:
 * its issues, plus the one word the page shows and filters on.
 */
export type VerdictStatus = "valid" | "invalid" | "unknown-method" | "unpaired" | "duplicate-id" | "not-json" | "sequence-gap";

export interface FrameVerdict {
  status: VerdictStatus;
  /** The method or message type the validator checked the frame as. */
  subject?: string;
  issues: ValidationIssue[];
}

/** Names the first problem: correlation and unknown methods before schema detail, as they explain the rest. */
export function frameVerdict(line: LineVerdict): FrameVerdict {
  const { issues, subject } = line;
  if (line.ok) return { status: "valid", subject, issues };
  return { status: statusOf(issues), subject, issues };
}

/**
 * Adds the gap `sequence-gaps.ts` found to a verdict: its status when the validator found nothing
 * else (the validator's own finding names the frame first), its issue after the validator's.
 */
export function withSequenceGap(verdict: FrameVerdict, gap: ValidationIssue | undefined): FrameVerdict {
  if (!gap) return verdict;
  return { status: verdict.status === "valid" ? "sequence-gap" : verdict.status, subject: verdict.subject, issues: [...verdict.issues, gap] };
}

function statusOf(issues: readonly ValidationIssue[]): VerdictStatus {
  if (issues.some((i) => i.keyword === "json")) return "not-json";
  for (const issue of issues) {
    if (issue.keyword === "correlation" && issue.message.startsWith("duplicate id")) return "duplicate-id";
    if (issue.keyword === "correlation") return "unpaired";
  }
  if (issues.some((i) => /\/(method|type)$/.test(i.pointer) && /^unknown (\w+ )*(method|event type|server message type)\b/.test(i.message))) return "unknown-method";
  return "invalid";
}
