import type { AuthenticateParams, AuthenticateResult, InitializeParams, InitializeResult } from "../../../generated/acp-v1.js";
import { ACP_PROTOCOL_VERSION } from "../../registry/acp/index.js";
import { clientOutsideWindow, outsideWindowMessage } from "../../shared/client-window.js";
import type { AcpMethodContext } from "../context.js";
import { invalidParams } from "../errors.js";
import { asksForPositions } from "../relay-positions.js";

/**
 * What the gateway can do for an ACP client (protocol §3): sessions it can load (Tau keeps
 * them), list, resume and close; prompts of text, with embedded resources inlined as text (Tau's
 * session.submit takes text only, so no images or audio); no MCP servers of the client's (Tau
 * has its own tools). It authenticates connections at the transport — the bearer token of the
 * WebSocket upgrade; the user's own process on stdio — so it advertises no auth methods. A client
 * of a known family whose version is outside the tested window is served, and the log says so.
 */
export async function initialize({ services, client }: AcpMethodContext, params: InitializeParams): Promise<InitializeResult> {
  client.capabilities = params.clientCapabilities ?? {};
  client.info = params.clientInfo ?? undefined;
  client.relayed = asksForPositions(params);
  client.initialized = true;
  const outside = clientOutsideWindow("acp", params.clientInfo);
  if (outside) services.log?.("warn", outsideWindowMessage(outside), { client: params.clientInfo?.name, version: outside.version, dialect: "acp" });
  return {
    // One version exists; a client asking for another gets ours and decides.
    protocolVersion: ACP_PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
      mcpCapabilities: { http: false, sse: false },
      sessionCapabilities: { list: {}, resume: {}, close: {} },
    },
    authMethods: [],
    agentInfo: { name: "tau-gateway", title: "Tau (tau-gateway)", version: services.serverVersion },
  };
}

export async function authenticate(_ctx: AcpMethodContext, params: AuthenticateParams): Promise<AuthenticateResult> {
  throw invalidParams("methodId", `no authentication method ${JSON.stringify(params.methodId)}: the gateway advertises none (it authenticates connections at the transport)`);
}
