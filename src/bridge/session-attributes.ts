import type { Snapshot } from "../../generated/tau-v18.js";
import { approvalModeFor, type ApprovalModeName } from "./interactions/index.js";

/**
 * What the gateway records on the Tau session itself, as immutable attributes, so a restarted
 * gateway (or another gateway on the same host) still knows a session's tenant and approval mode.
 */
export const ATTR_SOURCE = "source";
export const ATTR_TENANT = "tau-gateway.tenant";
export const ATTR_MODE = "tau-gateway.mode";

export function createAttributes(tenant: string | undefined, mode: ApprovalModeName): Record<string, string> {
  return { [ATTR_SOURCE]: "tau-gateway", [ATTR_MODE]: mode, ...(tenant ? { [ATTR_TENANT]: tenant } : {}) };
}

export function sessionTenant(snapshot: Snapshot): string | undefined {
  return snapshot.attributes[ATTR_TENANT];
}

export function sessionMode(snapshot: Snapshot): ApprovalModeName {
  return approvalModeFor(snapshot.attributes[ATTR_MODE]);
}
