import { readFileSync } from "node:fs";
import { BenchAskClient } from "./ask-client.js";
import { residentKiB } from "./processes.js";
import { serveHasFlag, startGateway, type GatewayAuth } from "./stack.js";
import { BenchTauClient } from "./tau-client.js";
import { inBatches, round, sleep } from "./stats.js";

/**
 * Resident memory of the gateway holding idle WebSocket connections: a fresh gateway per route,
 * warmed with one connection (so lazily compiled validators and code are in the baseline), then
 * N connections opened and left idle; the VmRSS growth per connection from N/5 to N open is the cost
 * of one more connection (the average over the baseline, one-time growth included, beside it). On `/tau` each connection includes its own upstream connection to the host
 * (by design: Tau ties client tools and observation to a connection).
 */

export type MemoryRoute = "/tau" | "/rpc";

export interface MemoryResult {
  route: MemoryRoute;
  connections: number;
  baselineMiB: number;
  /** Connections open at the second reading, and the RSS then (absent in older results). */
  firstConnections?: number;
  afterFirstMiB?: number;
  loadedMiB: number;
  /** RSS growth per connection from `firstConnections` to `connections` (older results: from the baseline). */
  perConnectionKiB: number;
  /** RSS growth over the baseline divided by all connections, one-time growth included (absent in older results). */
  averageKiB?: number;
}

/** Open files each process may have (soft limit of this process, which children inherit). */
export function openFileLimit(): number {
  try {
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return match ? (match[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(match[1])) : Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * How many connections per route fit the open-file limit: a `/tau` connection costs the gateway two
 * descriptors (client and upstream); the client side here holds one each. Headroom of 200.
 */
export function connectionsWithinLimit(wanted: number): { count: number; note?: string } {
  const limit = openFileLimit();
  const fits = Math.floor((limit - 200) / 2);
  if (fits >= wanted) return { count: wanted };
  return { count: Math.max(10, fits), note: `open-file limit ${limit} allows ${Math.max(10, fits)} connections per route, not ${wanted} (raise it with ulimit -n)` };
}

async function settledRss(pid: number): Promise<number> {
  // Let the gateway finish handshakes and any lazy work; read a few times and keep the last.
  let value = Number.NaN;
  for (let i = 0; i < 5; i++) {
    await sleep(200);
    value = residentKiB(pid);
  }
  return value;
}

export async function measureIdleConnections(route: MemoryRoute, count: number, hostUrl: string, auth: GatewayAuth): Promise<MemoryResult> {
  // The connection caps (when the build has them) must not be what is measured: all the connections
  // come from this one address, and the per-address cap (256 by default) closes the rest at once.
  const extraArgs: string[] = [];
  for (const cap of ["max-connections", "max-connections-per-address"]) if (serveHasFlag(cap)) extraArgs.push(`--${cap}`, String(count + 64));
  const { process: gateway, access } = await startGateway({ upstream: hostUrl, auth, extraArgs });
  type Held = { close(): Promise<void> };
  const open = (): Promise<Held> => (route === "/tau" ? BenchTauClient.connect(access.tau, access.headers) : openAsk(access.rpc, access.headers));
  const held: Held[] = [];
  // The slope is read from the first fifth on: the first connections also pay for growth that
  // happens once (the heap growing to its working size), which a gateway that starts small pays
  // there rather than at start-up; the rest pay only for themselves.
  const first = Math.max(1, Math.floor(count / 5));
  try {
    await (await open()).close();
    const baseline = await settledRss(gateway.pid);
    held.push(...(await inBatches(first, 50, open)));
    const afterFirst = await settledRss(gateway.pid);
    held.push(...(await inBatches(count - first, 50, open)));
    const loaded = await settledRss(gateway.pid);
    return {
      route,
      connections: count,
      baselineMiB: round(baseline / 1024, 1),
      firstConnections: first,
      afterFirstMiB: round(afterFirst / 1024, 1),
      loadedMiB: round(loaded / 1024, 1),
      perConnectionKiB: round((loaded - afterFirst) / (count - first), 1),
      averageKiB: round((loaded - baseline) / count, 1),
    };
  } finally {
    await inBatches(held.length, 100, (i) => held[i]!.close());
    await gateway.stop();
  }
}

/** An Ask connection that has answered one `ping`, so the gateway has fully attached it. */
async function openAsk(url: string, headers: Record<string, string>): Promise<BenchAskClient> {
  const client = await BenchAskClient.connect(url, headers);
  await client.call("ping");
  return client;
}
