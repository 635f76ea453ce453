import { homedir, platform } from "node:os";
import { join } from "node:path";
import type { InitializeParams, InitializeResult } from "../../../generated/codex-v2.js";
import { codexError } from "../codex-errors.js";
import type { CodexMethodContext } from "../context.js";

/**
 * initialize: the connection's first request. Clients read the server version from `userAgent`
 * (between the first `/` and the next space); `codexHome` must be an absolute path, so the gateway
 * names where a Codex home would be, though it keeps nothing there.
 */
export async function initialize({ services, peer }: CodexMethodContext, params: InitializeParams): Promise<InitializeResult> {
  if (peer.client.initialized) throw codexError("invalid_request", "Already initialized");
  // Codex sends the name as its HTTP originator header and refuses one that cannot be a header
  // value; the connection stays uninitialized, as there.
  if (!isHeaderValue(params.clientInfo.name)) {
    throw codexError("invalid_request", `Invalid clientInfo.name: '${params.clientInfo.name}'. Must be a valid HTTP header value.`);
  }
  peer.client = {
    initialized: true,
    clientInfo: params.clientInfo,
    experimentalApi: params.capabilities?.experimentalApi === true,
    optedOut: new Set(params.capabilities?.optOutNotificationMethods ?? []),
    relayed: params.capabilities?.tauGatewayRelay === true,
  };
  return {
    userAgent: `tau-gateway/${services.serverVersion} (${platform()}; node ${process.versions.node})`,
    codexHome: process.env.CODEX_HOME ?? join(homedir(), ".codex"),
    platformFamily: platform() === "win32" ? "windows" : "unix",
    platformOs: platform() === "darwin" ? "macos" : platform(),
  };
}

/**
 * What every HTTP stack takes as a header value: no control characters but tab (CR and LF above
 * all). Bytes beyond ASCII are left to pass, since not every stack refuses them.
 */
function isHeaderValue(text: string): boolean {
  return !/[\u0000-\u0008\u000a-\u001f\u007f]/.test(text);
}

/** initialized: only acknowledged; the connection is ready once initialize was answered. */
export async function initialized(): Promise<void> {}
