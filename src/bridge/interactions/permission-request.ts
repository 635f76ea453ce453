import type { ApprovalScope, InteractionRequestPermissionParams } from "../../../generated/ask-v1.0.js";

/** What a permission request says of the call it asks about. */
export interface AskedCall {
  readonly toolName: string;
  /** The call's arguments (left out when there are none). */
  readonly input?: unknown;
  /** What an approval may hold for (the approval record's): ["once"] under a policy's `require` rule. */
  readonly allowedScopes?: ApprovalScope[];
}

/**
 * The interaction/requestPermission every dialect's clients are asked with about one approval,
 * by the replica holding the call (command-tools.ts) and by the core's asking of clients on any
 * replica (remote-asking.ts): one shape, so a client hears the same question either way.
 */
export function permissionRequest(sessionId: string, interactionId: string, call: AskedCall): InteractionRequestPermissionParams {
  return {
    requestId: interactionId,
    toolName: call.toolName,
    ...(call.input === undefined ? {} : { input: call.input }),
    riskLevel: "medium",
    reason: `Tool '${call.toolName}' requires approval`,
    ...(call.allowedScopes ? { allowedScopes: call.allowedScopes } : {}),
    sessionId,
    interactionId,
  };
}
