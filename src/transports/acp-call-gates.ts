import { AcpError } from "../acp/agent.js";
import { AskError } from "../ask/ask-bridge.js";
import { ACP_ERROR_CODES } from "../registry/acp/index.js";
import type { AcpCallGate } from "./acp-jsonrpc.js";
import { observingGate } from "./ask-call-gates.js";
import type { CallObserver } from "./call-observer.js";

const ACP_ERROR_NAMES = new Map<number, string>(Object.entries(ACP_ERROR_CODES).map(([name, code]) => [code, name]));

/**
 * The registry name of the error an ACP client received: the agent's own errors and the shared
 * gates' (in-flight limit, drain), whose codes ACP's registry lists too.
 */
export function acpOutcome(error: unknown): string {
  if (error instanceof AcpError || error instanceof AskError) return ACP_ERROR_NAMES.get(error.code) ?? String(error.code);
  return "internal_error";
}

/** Reports every ACP call's method, outcome and duration (the shared gates compose with it). */
export function acpObservingGate(observe: CallObserver): AcpCallGate {
  return observingGate(observe, "acp", acpOutcome);
}
