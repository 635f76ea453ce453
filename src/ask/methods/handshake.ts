import type { Capability, InitializeParams, InitializeResult, PingResult } from "../../../generated/ask-v1.0.js";
import { ASK_PROTOCOL_VERSION } from "../../registry/ask/index.js";
import type { MethodContext } from "../context.js";

/** Only what the gateway really emits: no todos (Tau has none) and no file events. */
export const GATEWAY_CAPABILITIES: Capability[] = [
  "sessionManagement",
  "eventStreaming",
  "midExecutionInjection",
  "interactions",
  "planMode",
  "artifacts",
  "workspace",
];

/** `sessions` counts the caller's tenant's open sessions only: another tenant's come and go unseen. */
export async function ping({ services, peer }: MethodContext): Promise<PingResult> {
  return {
    status: "ok",
    version: services.serverVersion,
    protocolVersion: ASK_PROTOCOL_VERSION,
    uptime: Math.floor((Date.now() - services.startedAt) / 1000),
    sessions: services.sessions.visibleTo(peer.tenant).length,
  };
}

export async function initialize({ services, peer }: MethodContext, params: InitializeParams): Promise<InitializeResult> {
  peer.clientInfo = { name: params.client?.name ?? params.clientName, version: params.client?.version };
  // Reverse requests are opt-in: an app-server client that never answers them must not be asked.
  peer.capabilities.reverseRequests = (params.capabilities ?? []).includes("reverseRequests");
  return {
    protocolVersion: ASK_PROTOCOL_VERSION,
    capabilities: GATEWAY_CAPABILITIES,
    server: { name: "tau-gateway", version: services.serverVersion },
  };
}
