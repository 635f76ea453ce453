import type { ClientToolDefinition } from "../../../generated/tau-v18.js";
import { DEFAULT_COMMAND_TIMEOUT_MS, type CommandToolConfig } from "./tools-config.js";
import { ASK_USER_TOOL, SUBMIT_PLAN_TOOL } from "./tool-names.js";

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
/** At most this many suggested answers, as `input.requested` allows. */
export const MAX_ASK_USER_OPTIONS = 64;

export const ASK_USER_PARAMETERS = {
  type: "object",
  properties: {
    question: { type: "string", minLength: 1, description: "The question to put to the user." },
    options: {
      type: "array",
      items: { type: "string" },
      maxItems: MAX_ASK_USER_OPTIONS,
      description: "Suggested answers the user may pick from; they may also answer freely.",
    },
  },
  required: ["question"],
  additionalProperties: false,
} as const;

export const SUBMIT_PLAN_PARAMETERS = {
  type: "object",
  properties: {
    plan: { type: "string", minLength: 1, description: "The plan, in Markdown." },
  },
  required: ["plan"],
  additionalProperties: false,
} as const;

export interface GatewayClientToolsOptions {
  /** The interaction deadline in force (default DEFAULT_INTERACTION_DEADLINE_MS). */
  deadlineMs?: number;
}

export function gatewayClientTools(commandTools: CommandToolConfig[], options: GatewayClientToolsOptions = {}): ClientToolDefinition[] {
  const deadlineMs = options.deadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS;
  const waitingForPerson = deadlineMs + DEADLINE_GRACE_MS;
  return [
    {
      name: ASK_USER_TOOL,
      description:
        "Ask the user a question and wait for the answer. Use it when you need a decision or information only the user has. The result is the user's answer.",
      parameters: ASK_USER_PARAMETERS,
      executionTimeoutMs: waitingForPerson,
    },
    {
      name: SUBMIT_PLAN_TOOL,
      description:
        "Submit a plan for the user to approve before you act on it. The result says whether the user approved or rejected it, with their feedback.",
      parameters: SUBMIT_PLAN_PARAMETERS,
      executionTimeoutMs: waitingForPerson,
    },
    ...commandTools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      executionTimeoutMs: waitingForPerson + commandTimeoutMs(tool),
    })),
  ];
}

/** The limit a command tool's run gets. */
export const commandTimeoutMs = (tool: CommandToolConfig): number => tool.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
