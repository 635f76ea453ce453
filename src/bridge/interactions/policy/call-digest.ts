import { createHash } from "node:crypto";

/**
 * The digest of one call as a decision is bound to it: SHA-256 over the canonical JSON (object
 * keys sorted, no spaces; RFC 8785's ordering for the plain JSON a tool call carries) of its tool,
 * arguments, session and the policy's version. Any change in any of them is another digest.
 */

export interface DigestedCall {
  readonly tool: string;
  readonly arguments: unknown;
  readonly sessionId: string;
  readonly policyVersion: string;
}

/** `sha256:` and 64 hex digits. */
export function callDigest(call: DigestedCall): string {
  const canonical = canonicalJson({ arguments: call.arguments ?? null, policyVersion: call.policyVersion, sessionId: call.sessionId, tool: call.tool });
  return `sha256:${createHash("sha256").update(canonical, "utf8").digest("hex")}`;
}

/** JSON with every object's keys in code-unit order and no whitespace; undefined members are left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    return text === undefined ? "null" : text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(",")}}`;
}
