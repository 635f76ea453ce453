/** Where the gateway keeps what replicas share: `memory` (this process only) or a Redis server. */
export type StoreTarget = { kind: "memory" } | { kind: "redis"; host: string; port: number; db: number; url: string };

/**
 * Parses `memory` or `redis://HOST:PORT[/DB]`; throws an Error saying what is expected. Credentials
 * and TLS are not taken from the URL (a password in a setting ends up in process listings).
 */
export function parseStoreTarget(text: string): StoreTarget {
  if (text === "memory") return { kind: "memory" };
  const expected = "must be memory or redis://HOST:PORT[/DB]";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(expected);
  }
  if (url.protocol !== "redis:") throw new Error(expected);
  if (url.username || url.password) throw new Error("a redis:// store URL takes no credentials");
  if (url.search || url.hash) throw new Error(`${expected} (no query or fragment)`);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!host) throw new Error(`${expected}: the host is missing`);
  if (!url.port) throw new Error(`${expected}: the port is missing`);
  const path = url.pathname.replace(/^\//, "");
  if (path !== "" && !/^\d{1,2}$/.test(path)) throw new Error(`${expected}: DB must be a database number from 0 to 15`);
  const db = path === "" ? 0 : Number(path);
  if (db > 15) throw new Error(`${expected}: DB must be a database number from 0 to 15`);
  return { kind: "redis", host, port: Number(url.port), db, url: `redis://${url.host}/${db}` };
}
