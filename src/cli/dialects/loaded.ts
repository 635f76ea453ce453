import type { DialectRegistry } from "../../registry/model.js";
import type { JsonRpcDialect } from "../../transports/call-observer.js";
import type { DialectEntry, LoadedDialect } from "./descriptor.js";
import { DIALECTS } from "./index.js";

/** A dialect's entry with its descriptor, named by its registry. */
export async function loadDialect(entry: DialectEntry): Promise<LoadedDialect> {
  const descriptor = await entry.load();
  return { ...entry, name: clientDialectOf(descriptor.registry), descriptor };
}

/** Every dialect of the list, loaded. */
export function loadDialects(): Promise<LoadedDialect[]> {
  return Promise.all(DIALECTS.map(loadDialect));
}

/** The gateway's WebSocket routes: a dialect's own, and `/tau` (the passthrough), which no stdio command relays to. */
export const GATEWAY_ROUTES: readonly string[] = ["/tau", ...DIALECTS.map((entry) => entry.route)];

function clientDialectOf(registry: DialectRegistry): JsonRpcDialect {
  if (registry.dialect === "tau") throw new Error("the Tau registry describes the gateway's upstream, not a client dialect");
  return registry.dialect;
}
