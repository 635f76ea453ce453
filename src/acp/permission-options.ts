import type { PermissionOption, PermissionOptionKind } from "../../generated/acp-v1.js";
import { ProtocolValidators } from "../validation/validator.js";

/**
 * The options of a `session/request_permission` and what the client's answer means (protocol §8).
 * Option ids are the option kinds, so an answer names its kind; an answer that names no offered
 * option, does not fit the schema, or is an error denies — consent is never inferred.
 */

/** What a permission answer decides: one of the offered kinds, or the client cancelled the turn, or nothing usable came back. */
export type PermissionChoice = { kind: PermissionOptionKind } | { kind: "cancelled" } | { kind: "unusable"; reason: string };

/**
 * A gated command tool: all four kinds, the "always" ones holding for the rest of the session;
 * only the "once" ones for a call whose decision holds for it alone (`forSession` false).
 */
export function commandToolOptions(toolName: string, forSession = true): PermissionOption[] {
  const allow: PermissionOption = { optionId: "allow_once", name: "Allow", kind: "allow_once" };
  const reject: PermissionOption = { optionId: "reject_once", name: "Reject", kind: "reject_once" };
  if (!forSession) return [allow, reject];
  return [
    allow,
    { optionId: "allow_always", name: `Always allow ${toolName} in this session`, kind: "allow_always" },
    reject,
    { optionId: "reject_always", name: `Always reject ${toolName} in this session`, kind: "reject_always" },
  ];
}

/** A proposed plan: approve it or not, once. */
export const PLAN_OPTIONS: PermissionOption[] = [
  { optionId: "allow_once", name: "Approve the plan", kind: "allow_once" },
  { optionId: "reject_once", name: "Reject the plan", kind: "reject_once" },
];

export function permissionChoice(answer: unknown, offered: PermissionOption[]): PermissionChoice {
  const checked = ProtocolValidators.shared().get("acp").result("session/request_permission", answer, "", "server");
  if (!checked.ok) return { kind: "unusable", reason: `the answer does not fit the protocol (${checked.issues[0]?.pointer || "/"}: ${checked.issues[0]?.message})` };
  const { outcome } = answer as { outcome: { outcome: string; optionId?: string } };
  if (outcome.outcome === "cancelled") return { kind: "cancelled" };
  const option = offered.find((o) => o.optionId === outcome.optionId);
  return option ? { kind: option.kind } : { kind: "unusable", reason: `option ${JSON.stringify(outcome.optionId)} was not offered` };
}
