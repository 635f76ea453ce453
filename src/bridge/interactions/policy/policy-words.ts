import type { PolicyRule } from "./policy-rules.js";

/**
 * How a decision of the approval policy is told: the same words in the tool result Tau's agent
 * gets and in the event every client sees, in every dialect, naming the rule that decided.
 */

/** The rule as refusals and receipts name it: its name and its place in the file. */
export const ruleLabel = (rule: Pick<PolicyRule, "name" | "index">) => `${JSON.stringify(rule.name)} (/rules/${rule.index})`;

/** A call the policy refused. */
export const policyRefusal = (rule: Pick<PolicyRule, "name" | "index" | "reason">) =>
  `denied by the approval policy, rule ${ruleLabel(rule)}${rule.reason ? `: ${rule.reason}` : ""}`;

/** A call the policy let run without asking. */
export const policyReason = (rule: Pick<PolicyRule, "name" | "index">) => `allowed by the approval policy, rule ${ruleLabel(rule)}`;
