import type { Event } from "../../generated/ask-v1.0.js";
import { hostKeyOf } from "../../src/store/host-key.js";
import { AskTestClient } from "./ask-client.js";
import type { Cleanups } from "./cleanups.js";
import { serveCli, startCliProcess, type ServingCli } from "./cli.js";
import { startRedis, type RunningRedis } from "./redis-server.js";

/**
 * Gateway replicas sharing a Redis store in front of Tau hosts (one by default), every part a real
 * process: a redis-server, `tau-gateway host`s, and `tau-gateway serve --store redis://…` replicas
 * with an `--upstream` for each host.
 */

const HOST_LISTENING = /^tau host listening on (ws:\/\/\S+)$/m;

export interface ReplicaSet {
  redis: RunningRedis;
  /** The first host's URL. */
  hostUrl: string;
  hostUrls: string[];
  replicas: ServingCli[];
  /** Starts one more replica (on `storeUrl` instead of the Redis server's own, e.g. through a proxy) and waits until it is ready. */
  addReplica(options?: { storeUrl?: string }): Promise<ServingCli>;
  /** An Ask client on a replica's WebSocket /rpc, closed after the test. */
  client(replica: ServingCli): Promise<AskTestClient & { socket: import("ws").WebSocket }>;
}

export interface ReplicaSetOptions {
  replicas: number;
  /** Tau host processes (default 1). */
  hosts?: number;
  leaseMs?: number;
  retention?: number;
  streamDelayMs?: number;
  /** More `serve` arguments, the same for every replica (e.g. `--tools-config FILE`). */
  serveArgs?: string[];
  /** With `--tokens-file` among them: a token the set reads each replica's /metrics with. */
  metricsToken?: string;
}

export async function startReplicaSet(cleanups: Cleanups, options: ReplicaSetOptions): Promise<ReplicaSet> {
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  const hostUrls: string[] = [];
  for (let i = 0; i < (options.hosts ?? 1); i++) {
    const host = await startCliProcess(["host", "--port", "0", "--stream-delay-ms", String(options.streamDelayMs ?? 20)], HOST_LISTENING, cleanups);
    hostUrls.push(host.address);
  }
  const hostUrl = hostUrls[0]!;
  const replicas: ServingCli[] = [];
  const addReplica = async ({ storeUrl = redis.url }: { storeUrl?: string } = {}) => {
    const args = ["--port", "0", ...hostUrls.flatMap((url) => ["--upstream", url]), "--store", storeUrl, "--store-lease-ms", String(options.leaseMs ?? 3_000), "--log-level", "info"];
    if (options.retention) args.push("--event-retention", String(options.retention));
    args.push(...(options.serveArgs ?? []));
    const replica = await serveCli(args, cleanups);
    await until(async () => (await fetch(`${replica.baseUrl}/readyz`)).status === 200 || undefined, "the replica to be ready");
    replicas.push(replica);
    return replica;
  };
  // The first replica takes the hosts' leases before the others start.
  const first = await addReplica();
  await until(async () => (await leasesOwned(first, options.metricsToken)) === hostUrls.length || undefined, "the first replica to own the hosts");
  for (let i = 1; i < options.replicas; i++) await addReplica();
  return {
    redis,
    hostUrl,
    hostUrls,
    replicas,
    addReplica,
    async client(replica) {
      const client = await AskTestClient.websocket(`${replica.baseUrl.replace("http://", "ws://")}/rpc`);
      cleanups.push(() => client.socket.terminate());
      // A replica killed under the client resets the connection; what the tests look at is what arrived.
      client.socket.on("error", () => undefined);
      return client;
    },
  };
}

/** The replica's tau_gateway_store_leases_owned. */
export async function leasesOwned(replica: ServingCli, token?: string): Promise<number> {
  const text = await (await fetch(`${replica.baseUrl}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {})).text();
  return Number(/^tau_gateway_store_leases_owned (\d+)$/m.exec(text)?.[1] ?? "0");
}

/** A metric's value (first sample matching `pattern`, e.g. `tau_gateway_resumes_total{outcome="reset"}`). */
export async function metric(replica: ServingCli, sample: string): Promise<number> {
  const text = await (await fetch(`${replica.baseUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : Number.NaN;
}

export async function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await Promise.resolve().then(read).catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The host's answer stream in Redis: entries left, and entries taken but never acknowledged. */
export async function answerStream(set: ReplicaSet, hostUrl = set.hostUrl): Promise<{ length: number; unacknowledged: number }> {
  const redis = set.redis.client();
  const stream = `tau-gateway:{${hostKeyOf(hostUrl)}}:interaction-answers`;
  const length = await redis.xlen(stream);
  const pending = (await redis.xpending(stream, "owners")) as [number, ...unknown[]];
  return { length, unacknowledged: Number(pending[0]) };
}

/** The seqs of events, for comparisons. */
export const seqsOf = (events: readonly Event[]) => events.map((e) => e.seq);
