import type { Snapshot } from "../../generated/tau-v18.js";
import { approvalModeFor, type ApprovalModeName } from "./interactions/index.js";

/**
 * What the gateway records on the Tau session itself, as immutable attributes, so a restarted
 * gateway (or another gateway on the same host) still knows a session's tenant and approval mode.
 */
export const ATTR_SOURCE = "source";
export const ATTR_TENANT = "tau-gateway.tenant";
export const ATTR_MODE = "tau-gateway.mode";
/**
 * A session made for a Codex ephemeral thread: listed by no dialect, closed when its last client
 * leaves (Tau has no ephemeral sessions, and no delete).
 */
export const ATTR_EPHEMERAL = "tau-gateway.ephemeral";

export function createAttributes(tenant: string | undefined, mode: ApprovalModeName, options: { ephemeral?: boolean } = {}): Record<string, string> {
  return { [ATTR_SOURCE]: "tau-gateway", [ATTR_MODE]: mode, ...(tenant ? { [ATTR_TENANT]: tenant } : {}), ...(options.ephemeral ? { [ATTR_EPHEMERAL]: "true" } : {}) };
}

export function sessionEphemeral(snapshot: Snapshot): boolean {
  return snapshot.attributes[ATTR_EPHEMERAL] === "true";
}

export function sessionTenant(snapshot: Snapshot): string | undefined {
  return snapshot.attributes[ATTR_TENANT];
}

export function sessionMode(snapshot: Snapshot): ApprovalModeName {
  return approvalModeFor(snapshot.attributes[ATTR_MODE]);
}
