import { isIP } from "node:net";
import { parseHostAllowlist, type HostAllowlist } from "../gateway/auth/hosts.js";
import { parseAllowedOrigins, type OriginAllowlist } from "../gateway/auth/origins.js";
import { checkTokenText, TokenRegistry } from "../gateway/auth/tokens.js";
import { UsageError } from "./io.js";
import { envName, existingDirectory, nonEmpty, yesNo, type SettingSpec } from "./settings.js";

/**
 * The settings of the gateway's front door: who may connect (`--token` / `--tokens-file`), from
 * which browser origins, and which proxy's `X-Forwarded-For` is believed. Checked before anything
 * starts; every error names the setting.
 */
export const accessSettings = {
  token: { flag: "token", parse: checkTokenText, secret: true },
  tokensFile: { flag: "tokens-file", parse: nonEmpty },
  insecureNoAuth: { flag: "insecure-no-auth", default: false, parse: yesNo, switch: true },
  allowedOrigins: { flag: "allowed-origins", default: [] as OriginAllowlist, parse: parseAllowedOrigins },
  allowedHosts: { flag: "allowed-hosts", default: [] as HostAllowlist, parse: parseHostAllowlist },
  trustProxy: { flag: "trust-proxy", default: false as boolean | string[], parse: trustProxyValue },
} satisfies Record<string, SettingSpec<unknown>>;

export const ACCESS_USAGE = `  --token TOKEN                 the one bearer token clients must present (tenant "default");
                                prefer the variable: a flag shows in the process list ${envName("token")}
  --tokens-file FILE            JSON list of {id, token | sha256, tenant, workspaceRoots?, operator?}: one token per
                                client or tenant; workspaceRoots replace --workspace-root for that tenant;
                                operator: true lets the token see every tenant in --inspector ${envName("tokens-file")}
  --insecure-no-auth            allow serving a non-loopback address without tokens (default off) ${envName("insecure-no-auth")}
  --allowed-origins A,B         browser origins allowed for WebSockets and CORS, or * (default none;
                                requests without an Origin header are always allowed) ${envName("allowed-origins")}
  --allowed-hosts A,B           without tokens: host names requests may name in Host besides the
                                loopback names, the listen address and any IP address, or * (a
                                DNS-rebinding page names its own; ignored with tokens) ${envName("allowed-hosts")}
  --trust-proxy false|true|ADDRS  believe X-Forwarded-For from every peer (true) or only from these
                                proxy addresses/CIDRs, e.g. 127.0.0.1,10.0.0.0/8 (default false) ${envName("trust-proxy")}`;

interface AccessValues {
  token?: string;
  tokensFile?: string;
  insecureNoAuth: boolean;
}

/**
 * The tokens to check, or undefined for none. Without tokens only a loopback address may be served,
 * unless the operator says `--insecure-no-auth`: an open gateway gives full access to the Tau host.
 */
export async function loadTokens(settings: AccessValues, host: string): Promise<TokenRegistry | undefined> {
  if (settings.token !== undefined && settings.tokensFile !== undefined) {
    throw new UsageError(`give either --token (${envName("token")}) or --tokens-file (${envName("tokens-file")}), not both`);
  }
  let tokens: TokenRegistry | undefined;
  if (settings.token !== undefined) tokens = TokenRegistry.single(settings.token);
  if (settings.tokensFile !== undefined) {
    try {
      tokens = await TokenRegistry.fromFile(settings.tokensFile);
    } catch (err) {
      throw new UsageError(`invalid --tokens-file ${JSON.stringify(settings.tokensFile)}:\n${(err as Error).message}`);
    }
    for (const [tenant, roots] of tokens.tenantWorkspaceRoots()) {
      for (const root of roots) {
        try {
          existingDirectory(root);
        } catch (err) {
          throw new UsageError(`invalid --tokens-file ${JSON.stringify(settings.tokensFile)}: workspace root ${JSON.stringify(root)} of tenant ${JSON.stringify(tenant)}: ${(err as Error).message}`);
        }
      }
    }
  }
  if (!tokens && !settings.insecureNoAuth && !isLoopbackHost(host)) {
    throw new UsageError(
      `refusing to listen on ${host} without authentication: set --token (${envName("token")}) or --tokens-file, ` +
        `or pass --insecure-no-auth (${envName("insecure-no-auth")}=true) to serve it unauthenticated`,
    );
  }
  return tokens;
}

/** Addresses only this machine can reach. A host name other than localhost may resolve anywhere. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost" || bare === "::1") return true;
  const v4 = bare.startsWith("::ffff:") ? bare.slice("::ffff:".length) : bare;
  return isIP(v4) === 4 && v4.startsWith("127.");
}

/** proxy-addr's names for address ranges (Fastify's trustProxy accepts them too). */
const RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

export function trustProxyValue(text: string): boolean | string[] {
  const value = text.trim().toLowerCase();
  if (value === "true") return true;
  if (value === "false") return false;
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0) throw new Error("must be true, false or a list of proxy addresses");
  for (const entry of entries) {
    if (RANGE_NAMES.has(entry.toLowerCase())) continue;
    const [address, prefix, ...rest] = entry.split("/");
    const family = isIP(address ?? "");
    const maxPrefix = family === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR range (or loopback, linklocal, uniquelocal); use true, false or a list like 127.0.0.1,10.0.0.0/8`);
    }
  }
  return entries;
}
