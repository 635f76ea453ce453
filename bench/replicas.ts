import { cpuMs, cpuPerItemUs } from "./cpu.js";
import { findRedis, startRedis } from "./redis.js";
import { gatewayAuth, serveHasFlag, startGateway, startHost, type GatewayAccess } from "./stack.js";
import type { Started } from "./processes.js";
import { sleep } from "./stats.js";
import { measureFanOut, type TranslationResult } from "./translation.js";

/**
 * Replicas: the Ask fan-out of translation.ts (one streaming turn, N live subscribers, host's last
 * delta → `turn.completed` at each) through 1, 2 and 3 `serve --store redis://…` replicas on one
 * redis-server, the subscribers spread over them, against 1 replica with `--store memory`, on one
 * Tau host of their own. The session is created on the replica that holds the host's lease, so
 * the others serve their subscribers from the store (pub/sub and stream reads). Gateway CPU is the
 * replicas' together; Redis's own CPU is given apart.
 *
 * The configurations are run in turn, `rounds` times (each after a warm-up turn of its own), so a
 * machine that gets busier weighs on all of them; each row is the round with the median CPU per
 * delta, and `runs` keeps every round's figures.
 */

export interface ReplicaResult extends TranslationResult {
  store: "memory" | "redis";
  replicas: number;
  /** redis-server CPU per delta delivered to one subscriber, µs (null with the memory store or without /proc). */
  redisCpuUsPerDelta?: number | null;
  /** CPU per delta of each replica on its own, the lease holder first (the turn and its set-up; absent in older results). */
  replicaCpuUsPerDelta?: Array<number | null>;
  /** Every round's CPU per delta and delivered rate (absent in results from before rounds). */
  runs?: Array<{ gatewayCpuUsPerDelta: number | null; deltasPerSecond: number; replicaCpuUsPerDelta?: Array<number | null> }>;
}

export type ReplicaOutcome = { results: ReplicaResult[]; note?: string };

export interface ReplicaOptions {
  subscribers: number;
  deltas: number;
  /** Redis replica counts measured (each against the same memory replica); default 1, 2, 3. */
  counts?: readonly number[];
  rounds?: number;
  /** Node flags of replica i (0 = the lease holder) and of the memory replica (-1): a profile of each. */
  nodeFlags?: (replica: number) => string[];
}

export async function measureReplicas(options: ReplicaOptions, log: (line: string) => void): Promise<ReplicaOutcome> {
  const { subscribers, deltas } = options;
  const counts = options.counts ?? [1, 2, 3];
  const rounds = options.rounds ?? 1;
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

    const serve = async (store: string, index: number) => {
      const gateway = await startGateway({ upstream: hostUrl, auth, extraArgs: ["--store", store], nodeFlags: options.nodeFlags?.(index) });
      stops.unshift(() => gateway.process.stop());
      return gateway;
    };
    // The first replica takes the host's lease before the others start.
    const owner = await serve(redis.url, 0);
    await leaseHeld(owner.access);
    const replicas = [owner];
    while (replicas.length < Math.max(...counts)) replicas.push(await serve(redis.url, replicas.length));
    const single = await serve("memory", -1);

    type Gateway = { process: Started; access: GatewayAccess };
    const run = async (label: string, gateways: Gateway[], store: "memory" | "redis") => {
      log(`replicas: ${label}, warm-up`);
      await measureFanOut(gateways.map((g) => g.access), hostUrl, gateways.length, 1000);
      log(`replicas: ${label}, ${subscribers} subscribers`);
      const redisBefore = store === "redis" ? cpuMs([redis.pid]) : Number.NaN;
      const each = gateways.map((g) => cpuMs([g.process.pid]));
      const result = await measureFanOut(gateways.map((g) => g.access), hostUrl, subscribers, deltas, gateways.map((g) => g.process.pid));
      const redisAfter = store === "redis" ? cpuMs([redis.pid]) : Number.NaN;
      const replicaCpuUsPerDelta = gateways.map((g, i) => cpuPerItemUs(each[i]!, cpuMs([g.process.pid]), deltas * subscribers, 2));
      return { ...result, store, replicas: gateways.length, redisCpuUsPerDelta: cpuPerItemUs(redisBefore, redisAfter, deltas * subscribers, 2), replicaCpuUsPerDelta };
    };
    const configs: Array<{ label: string; gateways: Gateway[]; store: "memory" | "redis" }> = [
      { label: "1 replica, --store memory", gateways: [single], store: "memory" },
      ...counts.map((n) => ({ label: `${n} replica${n === 1 ? "" : "s"} on Redis`, gateways: replicas.slice(0, n), store: "redis" as const })),
    ];
    const measured: ReplicaResult[][] = configs.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const [i, config] of configs.entries()) measured[i]!.push(await run(`${config.label}${rounds > 1 ? ` (round ${round + 1} of ${rounds})` : ""}`, config.gateways, config.store));
    }
    return { results: measured.map(medianRound) };
  } catch (error) {
    return { results: [], note: `replica rows skipped: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

/** The round with the median CPU per delta, with every round's figures beside it. */
function medianRound(results: ReplicaResult[]): ReplicaResult {
  const sorted = [...results].sort((a, b) => (a.gatewayCpuUsPerDelta ?? 0) - (b.gatewayCpuUsPerDelta ?? 0));
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return { ...median, runs: results.map((r) => ({ gatewayCpuUsPerDelta: r.gatewayCpuUsPerDelta, deltasPerSecond: r.deltasPerSecond, replicaCpuUsPerDelta: r.replicaCpuUsPerDelta })) };
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
