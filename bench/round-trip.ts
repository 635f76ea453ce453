import { cpuMs, cpuPerItemUs } from "./cpu.js";
import { BenchTauClient } from "./tau-client.js";
import { inBatches, now, quantile, round, sleep } from "./stats.js";

/**
 * Tau round trip: `session.list` (the cheapest request there is) in a closed loop — each client
 * sends its next request as soon as the previous answer arrives — for a fixed time after a short
 * warm-up. Throughput and latency percentiles count only requests sent and answered inside the
 * measured window.
 */

export interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** Processes between client and host (nginx, the gateway) whose CPU is charged to this path. */
  relayPids?: number[];
  /** The Tau host process. */
  hostPid?: number;
}

export interface RoundTripResult {
  target: string;
  clients: number;
  requests: number;
  errors: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the relay (nginx or gateway) per request, µs; null for direct. */
  relayCpuUsPerRequest: number | null;
  hostCpuUsPerRequest: number | null;
}

export interface RoundTripOptions {
  warmupMs: number;
  durationMs: number;
}

export async function measureRoundTrip(target: Target, clients: number, options: RoundTripOptions): Promise<RoundTripResult> {
  const connections = await inBatches(clients, 16, () => BenchTauClient.connect(target.url, target.headers));
  const start = now();
  const measureFrom = start + options.warmupMs;
  const measureTo = measureFrom + options.durationMs;
  const latencies: number[] = [];
  let errors = 0;
  const cpu = { relay: [Number.NaN, Number.NaN], host: [Number.NaN, Number.NaN], read: [false, false] };
  const readCpu = (i: 0 | 1) => {
    cpu.relay[i] = target.relayPids?.length ? cpuMs(target.relayPids) : Number.NaN;
    cpu.host[i] = target.hostPid ? cpuMs([target.hostPid]) : Number.NaN;
    cpu.read[i] = true;
  };
  const timers = [setTimeout(() => readCpu(0), options.warmupMs), setTimeout(() => readCpu(1), options.warmupMs + options.durationMs)];

  const loop = async (client: BenchTauClient) => {
    while (now() < measureTo) {
      const sent = now();
      const response = await client.request("session.list", {});
      const answered = now();
      if (sent < measureFrom || answered > measureTo) continue;
      if (response.ok) latencies.push(answered - sent);
      else errors++;
    }
  };
  try {
    await Promise.all(connections.map(loop));
  } finally {
    timers.forEach(clearTimeout);
    // A timer can fire late on a busy client: take a missing reading now (slightly wider window).
    if (!cpu.read[1]) readCpu(1);
    await Promise.all(connections.map((c) => c.close()));
  }
  await sleep(100); // let the servers finish closing before the next measurement
  const seconds = options.durationMs / 1000;
  return {
    target: target.name,
    clients,
    requests: latencies.length,
    errors,
    seconds,
    requestsPerSecond: round(latencies.length / seconds, 0),
    p50Ms: round(quantile(latencies, 0.5), 3),
    p99Ms: round(quantile(latencies, 0.99), 3),
    relayCpuUsPerRequest: cpuPerItemUs(cpu.relay[0]!, cpu.relay[1]!, latencies.length + errors),
    hostCpuUsPerRequest: cpuPerItemUs(cpu.host[0]!, cpu.host[1]!, latencies.length + errors),
  };
}
