import type { ValidateFunction } from "ajv/dist/2019.js";
import { APPROVAL_POLICY_SCHEMA } from "../../../registry/approval-policy.js";
import { ajv2019 } from "../../../shared/lazy-ajv.js";
import { readConfigFile } from "../../../validation/config-files.js";
import { explain } from "../../../validation/issues.js";
import type { ApprovalModeName } from "../approval-modes.js";
import { compileGlob } from "./glob.js";
import { needsPrincipals, type ApprovalPolicy, type PolicyApprovers, type PolicyMatch, type PolicyRule } from "./policy-rules.js";
import { PolicyTextError, readPolicyText, type PolicyText } from "./policy-text.js";

/**
 * `--approval-policy FILE`: read, checked against the registry's schema
 * (schema/approval-policy.schema.json) and then for what a schema cannot say (unique rule names,
 * approval settings on rules that ask nobody, more approvers needed than are named; the roles a
 * rule may name are the schema's enum). Every problem
 * is one line `FILE:LINE:COLUMN: /pointer: reason`, so a refused start points at what to fix.
 */

interface RuleEntry {
  name: string;
  action: PolicyRule["action"];
  reason?: string;
  match?: {
    tool?: string;
    command?: string;
    arguments?: Record<string, string>;
    session?: { tenant?: string; approvalMode?: ApprovalModeName | ApprovalModeName[]; cwd?: string };
  };
  approvers?: "any" | { principals?: string[]; roles?: string[] };
  count?: number;
  deadline?: number;
  onDeadline?: "deny" | "allow";
}

interface PolicyDocument {
  version: string | number;
  rules: RuleEntry[];
}

let compiledCheck: ValidateFunction | undefined;
const checkDocument = (): ValidateFunction =>
  (compiledCheck ??= new (ajv2019())({ strict: true, allErrors: true, verbose: true }).compile(APPROVAL_POLICY_SCHEMA));

/** The settings a rule takes only when it asks someone. */
const REQUIRE_ONLY = ["approvers", "count", "deadline", "onDeadline"] as const;

export interface PolicyReading {
  /**
   * Set when no caller will have a principal (a gateway without tokens, a stdio command): why, in
   * words. Then a `require` rule only principals can satisfy (named deciders, or a count above 1:
   * policy-rules.ts needsPrincipals) is refused, as its calls could never be approved.
   */
  withoutPrincipals?: string;
  /**
   * The principals callers can have (the tokens file's ids), when known. Then a `require` rule
   * needing more distinct approvers than could ever answer it (its named principals among them,
   * or all of them when it names roles or no one) is refused, as its calls could never be approved.
   */
  principals?: readonly string[];
}

/** Reads and checks a policy file. */
export async function loadApprovalPolicy(path: string, reading: PolicyReading = {}): Promise<ApprovalPolicy> {
  return parseApprovalPolicy(await readConfigFile(path, "the approval policy"), path, reading);
}

/** Checks a policy file's text; `source` names it in errors (and tells JSON from YAML by its ending). */
export function parseApprovalPolicy(text: string, source: string, reading: PolicyReading = {}): ApprovalPolicy {
  let read: PolicyText;
  try {
    read = readPolicyText(text, source);
  } catch (error) {
    if (error instanceof PolicyTextError) throw new Error(`${source}:${error.message}`);
    throw error;
  }
  const problem = (pointer: string, reason: string) => {
    const { line, column } = read.placeOf(pointer);
    return `${source}:${line}:${column}: ${pointer || "/"}: ${reason}`;
  };
  const check = checkDocument();
  if (!check(read.value)) throw new Error(explain(check.errors).map((issue) => problem(issue.pointer, issue.message)).join("\n"));
  const document = read.value as PolicyDocument;
  const problems: string[] = [];
  const firstByName = new Map<string, number>();
  document.rules.forEach((rule, index) => {
    const at = `/rules/${index}`;
    const earlier = firstByName.get(rule.name);
    if (earlier !== undefined) problems.push(problem(`${at}/name`, `rule name ${JSON.stringify(rule.name)} is already used by /rules/${earlier}`));
    else firstByName.set(rule.name, index);
    if (rule.action !== "require") {
      for (const key of REQUIRE_ONLY) {
        if (rule[key] !== undefined) problems.push(problem(`${at}/${key}`, `only a rule whose action is "require" takes ${key} (this one's is ${JSON.stringify(rule.action)})`));
      }
    }
    const named = typeof rule.approvers === "object" ? rule.approvers : undefined;
    if (named && !named.roles && named.principals && (rule.count ?? 1) > named.principals.length) {
      problems.push(problem(`${at}/count`, `needs ${rule.count} distinct approvers but names only ${named.principals.length} principal(s) and no role`));
    }
    if (reading.withoutPrincipals !== undefined && rule.action === "require") {
      const unmet = unmetWithoutPrincipals(rule);
      if (unmet) problems.push(problem(`${at}/${unmet.key}`, `${unmet.why}: only callers with a token can decide it, and ${reading.withoutPrincipals}, so its calls could never be approved`));
    }
    if (reading.principals !== undefined && rule.action === "require") {
      const short = approversShort(rule, reading.principals);
      if (short) problems.push(problem(`${at}/${short.key}`, `${short.why}, so its calls could never be approved`));
    }
  });
  if (problems.length > 0) throw new Error(problems.join("\n"));
  return { version: String(document.version), rules: document.rules.map(compileRule) };
}

/** What of a `require` rule only principals can meet (its named approvers first, then its count), or undefined. */
function unmetWithoutPrincipals(rule: RuleEntry): { key: "approvers" | "count"; why: string } | undefined {
  const approvers = approversOf(rule.approvers);
  const count = rule.count ?? 1;
  if (!needsPrincipals(approvers, count)) return undefined;
  if (approvers !== "any") {
    const named = [...(approvers.principals.length ? [`principals ${approvers.principals.join(", ")}`] : []), ...(approvers.roles.length ? [`roles ${approvers.roles.join(", ")}`] : [])];
    return { key: "approvers", why: `it is decided by ${named.join("; ")}` };
  }
  return { key: "count", why: `it needs ${count} distinct approvers` };
}

/** How a `require` rule needs more distinct approvers than the known principals could give, or undefined. */
function approversShort(rule: RuleEntry, principals: readonly string[]): { key: "approvers" | "count"; why: string } | undefined {
  const approvers = approversOf(rule.approvers);
  const count = rule.count ?? 1;
  // A role can be granted to any principal; named principals count only if the tokens have them.
  const byNameOnly = approvers !== "any" && approvers.roles.length === 0;
  const eligible = byNameOnly ? approvers.principals.filter((id) => principals.includes(id)) : principals;
  if (count <= eligible.length) return undefined;
  const who = eligible.length === 0 ? "none" : `only ${eligible.length} (${eligible.join(", ")})`;
  if (byNameOnly) return { key: "approvers", why: `it needs ${count} distinct approver(s) among principals ${approvers.principals.join(", ")}, and of these the tokens have ${who}` };
  return { key: "count", why: `it needs ${count} distinct approvers, and the tokens are for ${who}` };
}

function compileRule(entry: RuleEntry, index: number): PolicyRule {
  return {
    name: entry.name,
    index,
    action: entry.action,
    ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
    match: compileMatch(entry.match ?? {}),
    approvers: approversOf(entry.approvers),
    count: entry.count ?? 1,
    ...(entry.deadline !== undefined ? { deadlineSeconds: entry.deadline } : {}),
    onDeadline: entry.onDeadline ?? "deny",
  };
}

function compileMatch(match: NonNullable<RuleEntry["match"]>): PolicyMatch {
  const { session } = match;
  const modes = session?.approvalMode;
  return {
    ...(match.tool !== undefined ? { tool: compileGlob(match.tool) } : {}),
    ...(match.command !== undefined ? { command: compileGlob(match.command) } : {}),
    arguments: Object.entries(match.arguments ?? {}).map(([pointer, glob]) => [pointer, compileGlob(glob)] as const),
    ...(session?.tenant !== undefined ? { tenant: compileGlob(session.tenant) } : {}),
    ...(modes !== undefined ? { approvalModes: new Set(Array.isArray(modes) ? modes : [modes]) } : {}),
    ...(session?.cwd !== undefined ? { cwd: compileGlob(session.cwd) } : {}),
  };
}

function approversOf(approvers: RuleEntry["approvers"]): PolicyApprovers {
  if (approvers === undefined || approvers === "any") return "any";
  return { principals: approvers.principals ?? [], roles: approvers.roles ?? [] };
}

