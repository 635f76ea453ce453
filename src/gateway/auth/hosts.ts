import { isIP } from "node:net";

/**
 * Which names a request's `Host` header may carry. A page of another site can get its own name to
 * resolve to this gateway's address (DNS rebinding) and then read it as its own origin: no Origin
 * header on its GETs, nothing the browser would refuse. Its requests still carry its own name in
 * `Host`, which is how they are told apart. The inspector checks this on every route; the client
 * routes check it when the gateway has no tokens (with tokens, a page has no token to send).
 */

/** `*`: any name; otherwise host names (lower case, IPv6 without brackets). */
export type HostAllowlist = "*" | readonly string[];

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];
const ANY_ADDRESS = new Set(["0.0.0.0", "::", ""]);

/** The host names the Host header may carry: the loopback names, the listen address unless it is a wildcard, and `extra`. */
export function allowedHostNames(listenHost: string, extra: readonly string[] = []): string[] {
  const names = new Set(LOOPBACK_NAMES);
  const listen = bareHost(listenHost);
  if (!ANY_ADDRESS.has(listen)) names.add(listen);
  for (const name of extra) names.add(bareHost(name));
  return [...names];
}

export const bareHost = (host: string) => host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");

/** The host name of a Host header (`name[:port]`, `[v6][:port]`), or undefined when it is not one. */
export function hostNameOf(header: string | undefined): string | undefined {
  if (!header || /[\s/?#@\\]/.test(header)) return undefined;
  try {
    const url = new URL(`http://${header}`);
    return url.hostname === "" ? undefined : bareHost(url.hostname);
  } catch {
    return undefined;
  }
}

/** Whether the Host header names one of `names`. */
export function hostAllowed(names: readonly string[], header: string | undefined): boolean {
  const name = hostNameOf(header);
  return name !== undefined && names.includes(name);
}

/**
 * The rule of the client routes: a name of the list, or any IP address written out (a rebinding
 * page is always reached by a name of its site, never by an address, so an address cannot be
 * one: clients on the network that reach the gateway by its address are served).
 */
export function clientHostAllowed(allowlist: HostAllowlist, header: string | undefined): boolean {
  if (allowlist === "*") return true;
  const name = hostNameOf(header);
  return name !== undefined && (allowlist.includes(name) || isIP(name) !== 0);
}

/** Parses `a,b,c` (or `*`) for `--allowed-hosts` / `--inspector-hosts`; throws naming an entry that is not a host name. */
export function parseHostList(text: string): string[] {
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  for (const name of names) {
    if (/[\s/?#@\\]/.test(name) || name.includes("://")) throw new Error(`${JSON.stringify(name)} is not a host name (give names like gateway.example.com, no scheme or port)`);
  }
  return names;
}

export function parseHostAllowlist(text: string): HostAllowlist {
  const names = parseHostList(text);
  if (names.includes("*")) {
    if (names.length > 1) throw new Error('"*" allows every host name and cannot be combined with others');
    return "*";
  }
  return names;
}
