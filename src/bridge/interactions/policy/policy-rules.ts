import { pointerKeys } from "../../../shared/json-pointer.js";
import { isObject } from "../../../shared/unknown-values.js";
import type { ApprovalModeName } from "../approval-modes.js";
import type { Deciders } from "../../../store/session-roles.js";
import type { Glob } from "./glob.js";

/**
 * An approval policy, read and checked (policy-file.ts), and how it decides a call: its rules are
 * tried in order and the first that matches decides; when none does, the session's approval mode
 * decides as it does without a policy. The policy of a gateway without a file has no rules, which
 * is exactly today's behaviour.
 */

export type PolicyAction = "allow" | "deny" | "require";

/** Who may decide a `require`d call: any controller of the session, or the principals and roles named. */
export type PolicyApprovers = Deciders;

export interface PolicyMatch {
  readonly tool?: Glob;
  readonly command?: Glob;
  /** JSON Pointer into the arguments, and the glob its value must match. */
  readonly arguments: ReadonlyArray<readonly [pointer: string, glob: Glob]>;
  readonly tenant?: Glob;
  readonly approvalModes?: ReadonlySet<ApprovalModeName>;
  readonly cwd?: Glob;
}

export interface PolicyRule {
  readonly name: string;
  /** Its place in the file's list (0-based). */
  readonly index: number;
  readonly action: PolicyAction;
  readonly reason?: string;
  readonly match: PolicyMatch;
  readonly approvers: PolicyApprovers;
  /** Distinct approvers a `require` needs. */
  readonly count: number;
  readonly deadlineSeconds?: number;
  readonly onDeadline: "deny" | "allow";
}

export interface ApprovalPolicy {
  /** Part of every call digest: a decision made under one version never counts under another. */
  readonly version: string;
  readonly rules: readonly PolicyRule[];
}

/**
 * Whether only callers with a principal (a token's id) can decide a call a `require` rule guards:
 * the rule names who decides (principals or roles, identities a caller without a token does not
 * have), or needs more than one distinct approver (callers without a principal cannot be told
 * apart, so none of them is counted as one). Such a rule is never satisfied by callers without a
 * principal (docs/approvals.md#callers-without-a-principal).
 */
export function needsPrincipals(approvers: Deciders, count: number): boolean {
  return approvers !== "any" || count > 1;
}

/** No file: no rules, so every call is decided by the session's mode. */
export const DEFAULT_POLICY: ApprovalPolicy = { version: "default", rules: [] };

/** What a rule can see of one call of a command tool. */
export interface PolicyCall {
  readonly toolName: string;
  /** The command line the tool runs: its command and configured args, joined by spaces. */
  readonly commandLine?: string;
  readonly arguments: unknown;
  readonly session: { readonly tenant: string; readonly approvalMode: ApprovalModeName; readonly cwd?: string };
}

/** The first rule that matches the call; undefined when none does (the session's mode decides). */
export function matchingRule(policy: ApprovalPolicy, call: PolicyCall): PolicyRule | undefined {
  return policy.rules.find((rule) => matches(rule.match, call));
}

function matches(match: PolicyMatch, call: PolicyCall): boolean {
  if (match.tool && !match.tool.matches(call.toolName)) return false;
  if (match.command && (call.commandLine === undefined || !match.command.matches(call.commandLine))) return false;
  if (match.tenant && !match.tenant.matches(call.session.tenant)) return false;
  if (match.approvalModes && !match.approvalModes.has(call.session.approvalMode)) return false;
  if (match.cwd && (call.session.cwd === undefined || !match.cwd.matches(call.session.cwd))) return false;
  return match.arguments.every(([pointer, glob]) => {
    const value = valueAt(call.arguments, pointer);
    return value !== undefined && glob.matches(typeof value === "string" ? value : JSON.stringify(value));
  });
}

/** The value a JSON Pointer names in `document`; undefined when there is none. */
export function valueAt(document: unknown, pointer: string): unknown {
  let value = document;
  for (const key of pointerKeys(pointer)) {
    if (Array.isArray(value)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return undefined;
      value = value[Number(key)];
    } else if (isObject(value) && Object.hasOwn(value, key)) {
      value = (value as Record<string, unknown>)[key];
    } else {
      return undefined;
    }
  }
  return value;
}
