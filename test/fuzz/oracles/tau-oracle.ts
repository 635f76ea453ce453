import { ProtocolValidators } from "../../../src/validation/validator.js";
import { formatIssue } from "../../../src/validation/issues.js";
import type { Expectation } from "./expectation.js";
import { isObject } from "../../../src/shared/unknown-values.js";
import { jsonBoundsError, topLevelId } from "../../../src/shared/json-bounds.js";

/**
 * Tau (spec §2.1): every text message a client sends gets exactly one response. It carries the
 * request's id when the id can be read (a string that is not blank), null otherwise — whatever
 * else is wrong with the message. A message past the gateway's bounds on its shape is refused
 * before it is parsed, with the top-level id read without parsing (json-bounds.ts topLevelId).
 */

const schema = () => ProtocolValidators.shared().get("tau", 18);

export function expectTau(unit: string, expectation: Expectation): void {
  expectation.sent++;
  if (jsonBoundsError(unit)) {
    const id = topLevelId(unit);
    return typeof id === "string" && id.trim() !== "" ? expectation.owe(id, undefined) : expectation.oweNull(true);
  }
  let value: unknown;
  try {
    value = JSON.parse(unit);
  } catch {
    return expectation.oweNull(true);
  }
  if (isObject(value) && typeof value.id === "string" && value.id.trim() !== "") {
    return expectation.owe(value.id, typeof value.method === "string" ? value.method : undefined);
  }
  expectation.oweNull(true);
}

/** A message the gateway sent on `/tau`: its problems against the v18 schema (empty when valid). */
export function checkTauMessage(message: unknown, respondsTo: string | undefined): string[] {
  const known = respondsTo !== undefined && schema().method(respondsTo)?.kind === "request" ? respondsTo : undefined;
  const checked = schema().message("server", message, known);
  return checked.ok ? [] : [`invalid ${checked.subject ?? "server"} message from the gateway (${checked.issues.slice(0, 3).map(formatIssue).join("; ")})`];
}

/** The id a Tau response answers, or undefined for any other server message. */
export function tauResponse(message: unknown): { id: unknown; errorCode?: string } | undefined {
  if (!isObject(message) || message.type !== "response") return undefined;
  const error = isObject(message.error) ? String(message.error.code) : undefined;
  return { id: message.id ?? null, errorCode: error };
}
