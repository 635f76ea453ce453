import type { AskForApproval, SandboxPolicy } from "../../generated/codex-v2.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import type { ApprovalModeName } from "../bridge/interactions/index.js";
import { requiresExperimentalApi } from "./codex-errors.js";

/**
 * Codex's `approvalPolicy` onto the gateway's approval modes (DESIGN §4.4): `never` runs the
 * gateway's command tools without asking; `untrusted` and `on-request` (and `on-failure`, which
 * the AI SDK provider may send) ask the client with item/commandExecution/requestApproval. A
 * granular policy asks unless it turns every approval off. Tau's own host tools are never gated.
 */

/** What a thread reports when the client chose nothing. */
export const DEFAULT_APPROVAL_POLICY: AskForApproval = "on-request";

/** The policy a client sent (params accept `on-failure`, read as on-request), checked against its capabilities. */
export function requestedPolicy(value: unknown, experimentalApi: boolean): AskForApproval | undefined {
  if (value === null || value === undefined) return undefined;
  if (value === "on-failure") return "on-request";
  const policy = value as AskForApproval;
  if (typeof policy === "object" && !experimentalApi) throw requiresExperimentalApi("askForApproval.granular");
  return policy;
}

export function approvalModeOf(policy: AskForApproval): ApprovalModeName {
  if (policy === "never") return "never";
  if (typeof policy === "object") {
    const { sandbox_approval, rules, mcp_elicitations } = policy.granular;
    return sandbox_approval || rules || mcp_elicitations ? "on_request" : "never";
  }
  return "on_request";
}

/**
 * The policy a thread reports for a session gated by `mode`, whichever client set it: the policy a
 * Codex client chose while it still stands for that mode (granular and `untrusted` included),
 * otherwise the nearest one — `never` for modes that run command tools unasked (`auto`, `never`),
 * `on-request` for those that ask (`on_request`, `plan`).
 */
export function policyOf(mode: ApprovalModeName, chosen: AskForApproval): AskForApproval {
  const asks = mode === "on_request" || mode === "plan";
  if ((approvalModeOf(chosen) === "on_request") === asks) return chosen;
  return asks ? DEFAULT_APPROVAL_POLICY : "never";
}

/**
 * The sandbox the thread really runs in. The gateway cannot confine Tau's tools, so a client's
 * `sandbox` is not honoured and the answer says what is true: a local environment has full
 * access, a remote machine is an external sandbox.
 */
export function sandboxOf(snapshot: Snapshot): SandboxPolicy {
  return snapshot.executionEnvironment.kind === "local" ? { type: "dangerFullAccess" } : { type: "externalSandbox", networkAccess: "enabled" };
}
