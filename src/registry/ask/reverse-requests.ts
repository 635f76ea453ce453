import type { MethodEntry } from "../model.js";
import { any, arr, describe, obj, oneOfStrings, opt, ref, str, type Schema } from "../schema.js";
import { serverRequest } from "../request-entries.js";

/**
 * Server → client requests kept for app-server interop (seed 002 REQUESTS). The gateway sends
 * them only to subscribed connections that opted in with the reverseRequests capability; the
 * canonical path is still the interaction/* and plan/* methods.
 */

/** Every decision string real clients answer with: Ask's legacy, ZCode's and Codex-style ones. */
export const PERMISSION_DECISIONS = [
  "allow",
  "deny",
  "approve",
  "reject",
  "accept",
  "decline",
  "allow_once",
  "allow_always",
  "acceptForSession",
  "cancel",
] as const;

/** Decisions that approve this one call (DESIGN §4.4). */
export const APPROVING_DECISIONS = ["allow", "approve", "accept", "allow_once"] as const;
/** Decisions that approve the tool for the rest of the session; every other decision denies. */
export const SESSION_APPROVING_DECISIONS = ["acceptForSession", "allow_always"] as const;

export const RISK_LEVELS = ["low", "medium", "high", "critical"] as const;

export const reverseRequestDefinitions: Record<string, Schema> = {
  PermissionDecision: describe(
    "A client's answer to interaction/requestPermission: allow, approve, accept and allow_once approve the call; acceptForSession and allow_always approve the tool for the session; anything else denies.",
    oneOfStrings(PERMISSION_DECISIONS),
  ),
  RiskLevel: describe("How risky the gated call is.", oneOfStrings(RISK_LEVELS)),
};

const reverseRequest = serverRequest;

const GATEWAY_IDS_DOC =
  "sessionId and interactionId are gateway extensions naming the session and the interaction the request resolves.";

const gatewayIds = {
  sessionId: opt(ref("SessionId")),
  interactionId: opt(str()),
};

export const askReverseRequestEntries: MethodEntry[] = [
  reverseRequest(
    "interaction/requestPermission",
    "Ask the client to approve or deny a gated tool call (app-server interop).",
    obj(
      {
        requestId: str(),
        toolName: str(),
        input: opt(any("Arguments of the gated call.")),
        riskLevel: opt(ref("RiskLevel")),
        reason: opt(str({ description: "Why approval is needed." })),
        allowedScopes: opt(
          describe(
            "Gateway extension: what an approval may hold for, as the approval's record says. [\"once\"] when the operator's policy requires approval of this very call: the decision holds for this call alone, so acceptForSession and allow_always approve it once and grant nothing for the session.",
            arr(ref("ApprovalScope"), { unique: true }),
          ),
        ),
        ...gatewayIds,
      },
      { description: GATEWAY_IDS_DOC },
    ),
    obj({
      decision: ref("PermissionDecision"),
      reason: opt(str({ description: "Why, as ZCode-style clients send it." })),
      feedback: opt(str({ description: "Rejection feedback passed to the agent." })),
    }),
  ),
  reverseRequest(
    "interaction/requestUserInput",
    "Ask the client for free-form user input (app-server interop).",
    obj(
      {
        requestId: str(),
        prompt: str(),
        options: opt(describe("Suggested answers.", arr(str()))),
        ...gatewayIds,
      },
      { description: GATEWAY_IDS_DOC },
    ),
    obj({ response: str() }),
  ),
];
