import { arch, homedir, platform } from "node:os";
import { join } from "node:path";
import type { InitializeParams, InitializeResult } from "../../../generated/codex-v2.js";
import { clientOutsideWindow, CODEX_COMPATIBLE_VERSION, outsideWindowMessage } from "../../shared/client-window.js";
import { codexError } from "../codex-errors.js";
import type { CodexMethodContext } from "../context.js";

/**
 * initialize: the connection's first request. Clients read the server version from `userAgent`
 * (between the first `/` and the next space) and the Codex UIs warn about a server older than
 * themselves, so the version there is the Codex release whose surface the gateway serves (the
 * newest of the client window); the gateway's own version follows in the comment, as Codex's
 * `originator/version (os; arch) …` does. `codexHome` must be an absolute path, so the gateway
 * names where a Codex home would be, though it keeps nothing there. A client of a known family
 * whose version is outside the window is served, and the log says so.
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
  const outside = clientOutsideWindow("codex", params.clientInfo);
  if (outside) services.log?.("warn", outsideWindowMessage(outside), { client: params.clientInfo.name, version: outside.version, dialect: "codex" });
  return {
    userAgent: codexUserAgent(services.serverVersion),
    codexHome: process.env.CODEX_HOME ?? join(homedir(), ".codex"),
    platformFamily: platform() === "win32" ? "windows" : "unix",
    platformOs: platform() === "darwin" ? "macos" : platform(),
  };
}

/** `tau-gateway/<Codex-compatible version> (tau-gateway <gateway version>; <os> <arch>; node <version>)`. */
export function codexUserAgent(serverVersion: string): string {
  return `tau-gateway/${CODEX_COMPATIBLE_VERSION} (tau-gateway ${serverVersion}; ${platform()} ${arch()}; node ${process.versions.node})`;
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
