import type { ClientToolDefinition } from "../../../generated/tau-v18.js";
import { ASK_USER_DEFINITION } from "./ask-user-tool.js";
import { commandTimeoutMs } from "./command-runs.js";
import { SUBMIT_PLAN_DEFINITION } from "./submit-plan-tool.js";
import type { CommandToolConfig } from "./tools-config.js";

/**
 * The client tools the bridge connection advertises to Tau (DESIGN §4.4): `ask_user`,
 * `submit_plan` and the operator's command tools. Tau cancels a call whose execution deadline
 * passes, so each deadline covers the longest legitimate wait: the interaction deadline (a person
 * deciding), plus the command's own limit for command tools, plus a grace period so the gateway's
 * own fail-closed answer reaches Tau before Tau gives up on the call.
 */

/** How long an interaction waits for a decision when the operator does not say. */
export const DEFAULT_INTERACTION_DEADLINE_MS = 300_000;
/** Time for the gateway's own deadline answer (or a command's result) to reach Tau. */
export const DEADLINE_GRACE_MS = 10_000;

export interface GatewayClientToolsOptions {
  /** The interaction deadline in force (default DEFAULT_INTERACTION_DEADLINE_MS). */
  deadlineMs?: number;
}

export function gatewayClientTools(commandTools: CommandToolConfig[], options: GatewayClientToolsOptions = {}): ClientToolDefinition[] {
  const deadlineMs = options.deadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS;
  const waitingForPerson = deadlineMs + DEADLINE_GRACE_MS;
  return [
    { ...ASK_USER_DEFINITION, executionTimeoutMs: waitingForPerson },
    { ...SUBMIT_PLAN_DEFINITION, executionTimeoutMs: waitingForPerson },
    ...commandTools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      executionTimeoutMs: waitingForPerson + commandTimeoutMs(tool),
    })),
  ];
}
