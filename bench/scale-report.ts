import type { FanOutResult } from "./fan-out.js";
import type { ReplicaResult } from "./replicas.js";
import type { SessionScaleResult } from "./sessions.js";
import { fmt, ratio } from "./stats.js";

/**
 * The scale curve as Markdown tables: replicas (1, 2 and 3 on one Redis against 1 in memory),
 * sessions (10, 100, 1,000 with 3 clients each, against the no-op Node.js relay) and fan-out (1 to
 * 500 subscribers of one session, against the Node.js relay). Every ratio is against a baseline of
 * the same run.
 */

const x = (value: number | null | undefined) => (value === null || value === undefined ? "–" : `${value.toFixed(2)}×`);

export function replicaCurve(replicas: readonly ReplicaResult[]): string[] {
  const single = replicas.find((r) => r.store === "memory");
  const onRedis = replicas.filter((r) => r.store === "redis").sort((a, b) => a.replicas - b.replicas);
  if (!single || onRedis.length === 0) return [];
  const lines = [
    `| Replicas, Ask, ${single.subscribers} subscribers spread over them | Gateway CPU µs/delta (all replicas) | ÷ 1 replica in memory | Redis CPU µs/delta | Deltas/s delivered | ÷ 1 replica in memory | Rounds: CPU µs/delta | Each replica µs/delta, lease holder first |`,
    "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
  ];
  for (const r of [single, ...onRedis]) {
    const label = r.store === "memory" ? "1 replica, `--store memory` (baseline)" : `${r.replicas} replica${r.replicas === 1 ? "" : "s"} on one Redis`;
    const rounds = (r.runs ?? []).map((run) => fmt(run.gatewayCpuUsPerDelta, 2)).join(", ");
    const each = (r.replicaCpuUsPerDelta ?? []).map((us) => fmt(us, 2)).join(" + ");
    lines.push(
      `| ${label} | ${fmt(r.gatewayCpuUsPerDelta, 2)} | ${x(ratio(r.gatewayCpuUsPerDelta ?? undefined, single.gatewayCpuUsPerDelta ?? undefined))} | ${r.store === "redis" ? fmt(r.redisCpuUsPerDelta, 2) : "–"} | ${fmt(r.deltasPerSecond)} | ${x(ratio(r.deltasPerSecond, single.deltasPerSecond))} | ${rounds || "–"} | ${each || "–"} |`,
    );
  }
  return lines;
}

export function sessionCurve(results: readonly SessionScaleResult[]): string[] {
  if (results.length === 0) return [];
  const lines = [
    "| Sessions, 3 clients each (Ask, Codex, ACP) | Gateway RSS MiB (fresh → sessions → clients) | RSS KiB per idle session | per client (÷ Node.js relay) | CPU µs per session created | per client attached (÷ Node.js relay) | Idle CPU µs per session per s (Node.js relay) |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const r of results) {
    const g = r.gateway;
    const n = r.node;
    lines.push(
      `| ${fmt(r.sessions)} sessions, ${fmt(r.sessions * r.clientsPerSession)} clients | ${fmt(g.baselineMiB, 1)} → ${fmt(g.sessionsMiB, 1)} → ${fmt(g.attachedMiB, 1)} | ${fmt(g.rssPerSessionKiB, 1)} (relay ${fmt(n.rssPerSessionKiB, 1)}) | ${fmt(g.rssPerClientKiB, 1)} vs ${fmt(n.rssPerClientKiB, 1)} (${x(ratio(g.rssPerClientKiB, n.rssPerClientKiB))}) | ${fmt(g.cpuPerSessionUs)} (relay ${fmt(n.cpuPerSessionUs)}) | ${fmt(g.cpuPerClientUs)} vs ${fmt(n.cpuPerClientUs)} (${x(ratio(g.cpuPerClientUs ?? undefined, n.cpuPerClientUs ?? undefined))}) | ${fmt(g.idleCpuUsPerSessionSecond, 2)} (${fmt(n.idleCpuUsPerSessionSecond, 2)}) |`,
    );
  }
  return lines;
}

export function fanOutCurve(results: readonly FanOutResult[]): string[] {
  if (results.length === 0) return [];
  const lines = [
    "| Fan-out, one session | Deltas | Gateway (Ask `/rpc`) deltas/s | Node.js relay (Tau) deltas/s | ÷ | Gateway CPU µs/delta | Node.js relay CPU µs/delta | ÷ | Host CPU µs/delta, gateway / Node.js relay |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const r of results) {
    lines.push(
      `| ${fmt(r.subscribers)} subscriber${r.subscribers === 1 ? "" : "s"} | ${fmt(r.deltas)} | ${fmt(r.gateway.deltasPerSecond)} | ${fmt(r.node.deltasPerSecond)} | ${x(ratio(r.gateway.deltasPerSecond, r.node.deltasPerSecond))} | ${fmt(r.gateway.cpuUsPerDelta, 2)} | ${fmt(r.node.cpuUsPerDelta, 2)} | ${x(ratio(r.gateway.cpuUsPerDelta ?? undefined, r.node.cpuUsPerDelta ?? undefined))} | ${fmt(r.gateway.hostCpuUsPerDelta, 2)} / ${fmt(r.node.hostCpuUsPerDelta, 2)} |`,
    );
  }
  return lines;
}

/** The three tables, each followed by a blank line; empty when the run measured none of them. */
export function scaleReport(results: { replicas?: readonly ReplicaResult[]; sessions?: readonly SessionScaleResult[]; fanOut?: readonly FanOutResult[] }): string[] {
  return [replicaCurve(results.replicas ?? []), sessionCurve(results.sessions ?? []), fanOutCurve(results.fanOut ?? [])].filter((t) => t.length > 0).flatMap((t) => [t.join("\n"), ""]);
}
