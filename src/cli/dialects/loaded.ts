import type { DialectEntry, LoadedDialect } from "./descriptor.js";
import { DIALECTS } from "./index.js";

/** A dialect's entry with its descriptor, named by its registry. */
export async function loadDialect(entry: DialectEntry): Promise<LoadedDialect> {
  const descriptor = await entry.load();
  return { ...entry, name: descriptor.registry.dialect, descriptor };
}

/** Every dialect of the list, loaded. */
export function loadDialects(): Promise<LoadedDialect[]> {
  return Promise.all(DIALECTS.map(loadDialect));
}

/** The gateway's WebSocket routes: a dialect's own, and `/tau` (the passthrough), which no stdio command relays to. */
export const GATEWAY_ROUTES: readonly string[] = ["/tau", ...DIALECTS.map((entry) => entry.route)];
