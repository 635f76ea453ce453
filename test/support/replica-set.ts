import type { Event } from "../../generated/ask-v1.0.js";
import { AskTestClient } from "./ask-client.js";
import type { Cleanups } from "./cleanups.js";
import { serveCli, startCliProcess, type ServingCli } from "./cli.js";
import { startRedis, type RunningRedis } from "./redis-server.js";

/**
 * Gateway replicas sharing a Redis store in front of one Tau host, every part a real process: a
 * redis-server, a `tau-gateway host`, and `tau-gateway serve --store redis://…` replicas.
 */

const HOST_LISTENING = /^tau host listening on (ws:\/\/\S+)$/m;

export interface ReplicaSet {
  redis: RunningRedis;
  hostUrl: string;
  replicas: ServingCli[];
  /** Starts one more replica and waits until it is ready. */
  addReplica(): Promise<ServingCli>;
  /** An Ask client on a replica's WebSocket /rpc, closed after the test. */
  client(replica: ServingCli): Promise<AskTestClient & { socket: import("ws").WebSocket }>;
}

export interface ReplicaSetOptions {
  replicas: number;
  leaseMs?: number;
  retention?: number;
  streamDelayMs?: number;
  /** More `serve` arguments, the same for every replica (e.g. `--tools-config FILE`). */
  serveArgs?: string[];
}

export async function startReplicaSet(cleanups: Cleanups, options: ReplicaSetOptions): Promise<ReplicaSet> {
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  const host = await startCliProcess(["host", "--port", "0", "--stream-delay-ms", String(options.streamDelayMs ?? 20)], HOST_LISTENING, cleanups);
  const hostUrl = host.address;
  const replicas: ServingCli[] = [];
  const addReplica = async () => {
    const args = ["--port", "0", "--upstream", hostUrl, "--store", redis.url, "--store-lease-ms", String(options.leaseMs ?? 3_000), "--log-level", "info"];
    if (options.retention) args.push("--event-retention", String(options.retention));
    args.push(...(options.serveArgs ?? []));
    const replica = await serveCli(args, cleanups);
    await until(async () => (await fetch(`${replica.baseUrl}/readyz`)).status === 200 || undefined, "the replica to be ready");
    replicas.push(replica);
    return replica;
  };
  // The first replica takes the host's lease before the others start.
  const first = await addReplica();
  await until(async () => (await leasesOwned(first)) === 1 || undefined, "the first replica to own the host");
  for (let i = 1; i < options.replicas; i++) await addReplica();
  return {
    redis,
    hostUrl,
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
export async function leasesOwned(replica: ServingCli): Promise<number> {
  const text = await (await fetch(`${replica.baseUrl}/metrics`)).text();
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

/** The seqs of events, for comparisons. */
export const seqsOf = (events: readonly Event[]) => events.map((e) => e.seq);
