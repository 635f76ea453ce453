import type { ErrorObject } from "ajv";
import { BASE64_PATTERN } from "../registry/schema.js";
import { escapePointerSegment, unescapePointerSegment } from "../shared/json-pointer.js";

/** One validation failure: where (JSON pointer into the message) and what, in plain words. */
export interface ValidationIssue {
  pointer: string;
  message: string;
  keyword: string;
}

/** Patterns the registry uses, explained in words instead of regex. */
const PATTERN_TEXT: Record<string, string> = {
  "\\S": "must not be empty or whitespace only",
  "^[^\\r\\n]*$": "must be a single line (no CR or LF)",
  "^[^\\r]*$": "must not contain a carriage return",
  "^[^\\u0000]*$": "must not contain NUL characters",
  "^\\s*[^\\s\\u0000][^\\u0000]*$": "must not be empty or whitespace only, nor contain NUL characters",
  "^[^\\S\\r\\n]*\\S[^\\r\\n]*$": "must be a single line (no CR or LF) that is not empty or whitespace only",
  "^/": "must be an absolute path (start with /)",
  "^[A-Za-z_][A-Za-z0-9_]*$": "must be a valid environment variable name",
  [BASE64_PATTERN]: "must be padded standard base64",
};

const UNION_KEYWORDS = new Set(["anyOf", "oneOf", "if"]);

/**
 * Turns ajv's raw errors into the few that explain the failure. A union reports an error per
 * branch; a branch whose discriminator (`const` on type/kind/role/ok/…) did not match is noise as
 * soon as another branch at the same place matched and reported the real problem. When no branch
 * matched, only the discriminator is reported ("must be one of …").
 */
export function explain(errors: readonly ErrorObject[] | null | undefined): ValidationIssue[] {
  const merged = mergeAlternatives(relevantErrors(errors));
  const seen = new Set<string>();
  return merged.filter((issue) => {
    const key = `${issue.pointer}\u0000${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * ajv's raw errors less the noise explain() drops (union summaries, discriminators of branches
 * that did not match, errors of rejected branches), for callers that word issues their own way.
 */
export function relevantErrors(errors: readonly ErrorObject[] | null | undefined): ErrorObject[] {
  if (!errors?.length) return [];
  let relevant = errors.filter((e) => !UNION_KEYWORDS.has(e.keyword));
  if (!relevant.length) relevant = [...errors];

  // Discriminator values that did not match, per object location: "/x" → {kind: ["local", …]}.
  const rejected = new Map<string, Map<string, unknown[]>>();
  for (const e of relevant) {
    if (e.keyword !== "const" || !e.instancePath) continue;
    const at = parentPointer(e.instancePath);
    const key = unescapePointerSegment(e.instancePath.slice(at.length + 1));
    if (!rejected.has(at)) rejected.set(at, new Map());
    const values = rejected.get(at)!;
    values.set(key, [...(values.get(key) ?? []), (e.params as { allowedValue: unknown }).allowedValue]);
  }
  // An object-level error (required, additionalProperties) belongs to a rejected branch when that
  // branch's own schema (ajv's parentSchema, with verbose errors) declares a rejected discriminator.
  const inRejectedBranch = (e: ErrorObject): boolean => {
    const values = rejected.get(e.instancePath);
    const properties = (e.parentSchema as { properties?: Record<string, { const?: unknown }> } | undefined)?.properties;
    if (!values || !properties) return false;
    for (const [key, consts] of values) if (properties[key] && consts.includes(properties[key]!.const)) return true;
    return false;
  };
  const isDiscriminatorError = (e: ErrorObject) => e.keyword === "const" && rejected.has(parentPointer(e.instancePath));
  const matched = new Set<string>();
  for (const at of rejected.keys()) {
    const inside = relevant.some(
      (e) => (e.instancePath === at || e.instancePath.startsWith(`${at}/`)) && !isDiscriminatorError(e) && !inRejectedBranch(e),
    );
    if (inside) matched.add(at);
  }
  return relevant.filter((e) => {
    if (inRejectedBranch(e)) return false;
    // Another branch matched here: its errors say what is wrong, the discriminators are noise.
    if (isDiscriminatorError(e)) return !matched.has(parentPointer(e.instancePath));
    return true;
  });
}

const parentPointer = (pointer: string) => pointer.slice(0, Math.max(0, pointer.lastIndexOf("/")));

/** `const` / `type` failures at one pointer from several branches become one "must be one of". */
function mergeAlternatives(errors: ErrorObject[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const alternatives = new Map<string, { values: unknown[]; types: string[]; index: number }>();
  for (const e of errors) {
    const pointer = pointerOf(e);
    if (e.keyword === "const" || e.keyword === "type") {
      let alt = alternatives.get(pointer);
      if (!alt) {
        alt = { values: [], types: [], index: out.length };
        alternatives.set(pointer, alt);
        out.push({ pointer, message: "", keyword: e.keyword });
      }
      if (e.keyword === "const") alt.values.push((e.params as { allowedValue: unknown }).allowedValue);
      else alt.types.push(String((e.params as { type: unknown }).type));
      continue;
    }
    const message = e.propertyName !== undefined && e.keyword !== "propertyNames" ? `key ${describeError(e)}` : describeError(e);
    out.push({ pointer, message, keyword: e.keyword });
  }
  for (const alt of alternatives.values()) {
    const parts: string[] = [];
    if (alt.values.length) {
      const values = [...new Set(alt.values.map((v) => JSON.stringify(v)))];
      parts.push(values.length === 1 ? `must be ${values[0]}` : `must be one of ${values.join(", ")}`);
    }
    if (alt.types.length) parts.push(`must be of type ${[...new Set(alt.types)].join(" or ")}`);
    out[alt.index]!.message = parts.join(", or ");
  }
  return out;
}

function pointerOf(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  if (e.propertyName !== undefined) return `${e.instancePath}/${escapePointerSegment(e.propertyName)}`;
  if (e.keyword === "required") return `${e.instancePath}/${escapePointerSegment(String(p.missingProperty))}`;
  if (e.keyword === "additionalProperties") return `${e.instancePath}/${escapePointerSegment(String(p.additionalProperty))}`;
  if (e.keyword === "propertyNames" && typeof p.propertyName === "string") return `${e.instancePath}/${escapePointerSegment(p.propertyName)}`;
  return e.instancePath;
}


function describeError(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not an allowed field";
    case "pattern":
      return PATTERN_TEXT[String(p.pattern)] ?? `must match ${String(p.pattern)}`;
    case "enum":
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "minLength":
      return p.limit === 1 ? "must not be empty" : `must be at least ${String(p.limit)} characters`;
    case "maxLength":
      return `must be at most ${String(p.limit)} characters`;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `must be ${String(p.comparison)} ${String(p.limit)}`;
    case "maxItems":
      return `must have at most ${String(p.limit)} items`;
    case "minItems":
      return `must have at least ${String(p.limit)} items`;
    case "maxProperties":
      return `must have at most ${String(p.limit)} entries`;
    case "maxContains":
      return `must contain at most ${String(p.limit)} such items`;
    case "propertyNames":
      return `has an invalid key ${JSON.stringify(p.propertyName)}`;
    case "uniqueItems":
      return `must not contain duplicates (items ${String(p.j)} and ${String(p.i)} are equal)`;
    case "not":
      return "is not allowed here";
    case "false schema":
      return "must not be present";
    default:
      return e.message ?? `fails ${e.keyword}`;
  }
}

/** One line per issue, e.g. `/params/sessionId: is required`. */
export const formatIssue = (issue: ValidationIssue) => `${issue.pointer || "/"}: ${issue.message}`;
