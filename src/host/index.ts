import { TauHostServer } from "./server.js";
import { resolveHostOptions, type TauHostOptions } from "./host-options.js";

export type { TauHostOptions } from "./host-options.js";

export interface RunningTauHost {
  /** ws://HOST:PORT */
  url: string;
  host: string;
  port: number;
  /** Terminates connections (late arrivals get 1012), interrupts work, persists, stops. */
  close(): Promise<void>;
}

/**
 * Starts the embedded reference Tau host (protocol v18) with its scripted agent. With `port: 0`
 * the system picks a free port; `url` names the one actually bound.
 */
export async function startTauHost(options: TauHostOptions = {}): Promise<RunningTauHost> {
  const resolved = resolveHostOptions(options);
  const server = new TauHostServer(resolved);
  const address = await server.listen();
  const host = resolved.host;
  return {
    url: `ws://${formatHost(host)}:${address.port}`,
    host,
    port: address.port,
    close: () => server.close(),
  };
}

/** IPv6 literals need brackets in a URL. */
export function formatHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
