import { cpuMs, cpuPerItemUs } from "./cpu.js";
import { findRedis, startRedis } from "./redis.js";
import { gatewayAuth, serveHasFlag, startGateway, startHost, type GatewayAccess } from "./stack.js";
import type { Started } from "./processes.js";
import { sleep } from "./stats.js";
import { measureFanOut, type TranslationResult } from "./translation.js";

/**
 * Replicas: the Ask fan-out of translation.ts (one streaming turn, N live subscribers, host's last
 * delta → `turn.completed` at each) through 3 `serve --store redis://…` replicas on one
 * redis-server, the subscribers spread over the three, against 1 replica with `--store memory`, on
 * one Tau host of their own. The session is created on the replica that holds the host's lease, so
 * the other two serve their subscribers from the store (pub/sub and stream reads). Gateway CPU is
 * the replicas' together; Redis's own CPU is given apart.
 */

export interface ReplicaResult extends TranslationResult {
  store: "memory" | "redis";
  replicas: number;
  /** redis-server CPU per delta delivered to one subscriber, µs (null with the memory store or without /proc). */
  redisCpuUsPerDelta?: number | null;
}

export type ReplicaOutcome = { results: ReplicaResult[]; note?: string };

export async function measureReplicas(subscribers: number, deltas: number, log: (line: string) => void): Promise<ReplicaOutcome> {
  const binary = findRedis();
  if (!binary) return { results: [], note: "redis-server is not installed: replica rows skipped" };
  if (!serveHasFlag("store")) return { results: [], note: "replica rows skipped: serve of this build has no --store" };
  const auth = gatewayAuth();
  const stops: Array<() => Promise<void>> = [];
  try {
    const host = await startHost();
    stops.unshift(() => host.stop());
    const hostUrl = host.match[1]!;
    const redis = await startRedis(binary);
    stops.unshift(() => redis.stop());

    const serve = async (store: string) => {
      const gateway = await startGateway({ upstream: hostUrl, auth, extraArgs: ["--store", store] });
      stops.unshift(() => gateway.process.stop());
      return gateway;
    };
    // The first replica takes the host's lease before the others start.
    const owner = await serve(redis.url);
    await leaseHeld(owner.access);
    const replicas = [owner, await serve(redis.url), await serve(redis.url)];
    const single = await serve("memory");

    const run = async (label: string, gateways: Array<{ process: Started; access: GatewayAccess }>, store: "memory" | "redis") => {
      log(`replicas: ${label}, warm-up`);
      await measureFanOut(gateways.map((g) => g.access), hostUrl, gateways.length, 1000);
      log(`replicas: ${label}, ${subscribers} subscribers`);
      const redisBefore = store === "redis" ? cpuMs([redis.pid]) : Number.NaN;
      const result = await measureFanOut(gateways.map((g) => g.access), hostUrl, subscribers, deltas, gateways.map((g) => g.process.pid));
      const redisAfter = store === "redis" ? cpuMs([redis.pid]) : Number.NaN;
      return { ...result, store, replicas: gateways.length, redisCpuUsPerDelta: cpuPerItemUs(redisBefore, redisAfter, deltas * subscribers, 2) };
    };
    return { results: [await run("1 replica, --store memory", [single], "memory"), await run("3 replicas on Redis", replicas, "redis")] };
  } catch (error) {
    return { results: [], note: `replica rows skipped: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

/** Waits until the replica reports holding the host's lease (tau_gateway_store_leases_owned 1). */
async function leaseHeld(access: GatewayAccess): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const text = await fetch(`${access.http}/metrics`, { headers: access.headers }).then((r) => r.text(), () => "");
    if (/^tau_gateway_store_leases_owned 1$/m.test(text)) return;
    if (Date.now() > deadline) throw new Error("the first replica did not take the host's lease within 30 s");
    await sleep(50);
  }
}
