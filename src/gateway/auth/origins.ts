/**
 * The browser origins allowed to open WebSockets and make CORS requests (`--allowed-origins`).
 * Browsers always send `Origin` on WebSocket upgrades and cross-origin requests, and a page cannot
 * forge it, so the allowlist is what keeps a random web page from using a user's gateway (Tau's
 * own listener has no such check, spec §9). Non-browser clients send no Origin and are not limited.
 */

/** `*` allows every origin; otherwise exact origins (`scheme://host[:port]`). */
export type OriginAllowlist = "*" | readonly string[];

/** Parses `a,b,c` (or `*`); throws an Error naming the entry that is not an origin. */
export function parseAllowedOrigins(text: string): OriginAllowlist {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.includes("*")) {
    if (entries.length > 1) throw new Error('"*" allows every origin and cannot be combined with others');
    return "*";
  }
  return [...new Set(entries.map(normalizeOrigin))];
}

function normalizeOrigin(entry: string): string {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new Error(`${JSON.stringify(entry)} is not an origin like https://app.example.com`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${JSON.stringify(entry)}: an origin must be http:// or https://`);
  if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) {
    throw new Error(`${JSON.stringify(entry)}: an origin is only scheme://host[:port], without path, query or credentials`);
  }
  return url.origin;
}

/** Whether a request with this `Origin` header may proceed. No header: not a browser, allowed. */
export function originAllowed(allowlist: OriginAllowlist, origin: string | undefined): boolean {
  if (origin === undefined) return true;
  if (allowlist === "*") return true;
  let normalized: string;
  try {
    normalized = new URL(origin).origin;
  } catch {
    return false; // "null" (sandboxed frames, file://) and anything malformed
  }
  return normalized !== "null" && allowlist.includes(normalized);
}
