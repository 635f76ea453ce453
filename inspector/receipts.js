// A command-tool call's receipt as the approvals panel shows it, with no DOM: what was called under
// which rule, then each step of its lifecycle in words (proposed, asked whom, each vote, decided by
// whom or by the deadline, executed with the call's digest, the result returned).

const clock = (iso) => (typeof iso === "string" ? iso.slice(11, 23) : "");

/** What decided a call, in words: a client's answer, the deadline, the policy's rule, the session's mode, a grant. */
const DECIDER_WORDS = { client: "a client", deadline: "the deadline", rule: "the policy's rule", mode: "the session's mode", grant: "a grant for the session" };

/**
 * The receipt's head: the tool and call, the rule that matched (or none), the policy's version and
 * the digest of the call decided.
 * @param {{ callId: string, tool: string, digest: string, policyVersion: string, rule?: { name: string, index: number }, interactionId?: string }} receipt
 */
export function receiptHead(receipt) {
  const rule = receipt.rule ? `rule "${receipt.rule.name}" (/rules/${receipt.rule.index})` : "no rule (the session's mode)";
  const asked = receipt.interactionId ? `, asked as ${receipt.interactionId}` : "";
  return `${receipt.tool} ${receipt.callId}${asked} — ${rule}, policy ${receipt.policyVersion} — ${receipt.digest}`;
}

/**
 * One step in words, with its time first.
 * @param {{ step: string, at: string, [key: string]: any }} step
 */
export function stepWords(step) {
  const at = clock(step.at);
  switch (step.step) {
    case "proposed":
      return `${at} proposed`;
    case "asked":
      return `${at} asked ${step.whom}`;
    case "vote":
      return `${at} vote: ${step.approver} ${step.approve ? "approves" : "rejects"}`;
    case "decided": {
      const who = step.approvers?.length ? ` (${step.approvers.join(", ")})` : "";
      return `${at} decided by ${DECIDER_WORDS[step.by] ?? step.by}${who}: ${step.outcome}${step.detail ? ` — ${step.detail}` : ""}`;
    }
    case "executed":
      return `${at} executed ${step.digest}`;
    case "returned":
      return `${at} returned ${step.ok ? "ok" : `a failure${step.error ? `: ${step.error}` : ""}`}`;
    default:
      return `${at} ${step.step}`;
  }
}

/** Whether the call's receipt is finished (its result went back to Tau, or the call was cancelled). */
export const finished = (receipt) => receipt.steps.at(-1)?.step === "returned";
