import type { BenchResults } from "./bench-results.js";

/**
 * The figures of one benchmark run that two builds are compared on, each labelled as the report
 * names it and marked with the direction that is better. Pattern validation is left out: it runs in
 * the benchmark's own process on the current tree's schema/, so both builds would measure the same
 * code. So is the real `codex app-server`, which is not part of either build.
 */

export interface Figure {
  /** The row's name, the same in every run (the key the rounds are matched on). */
  label: string;
  /** null when the run could not measure it (no /proc, no nginx, …). */
  value: number | null;
  better: "higher" | "lower";
}

const TARGETS: Record<string, string> = { direct: "direct to host", nginx: "nginx", node: "Node.js relay", gateway: "gateway `/tau`" };
const SURFACES = { ask: "Ask `/rpc`", codex: "Codex `/`", acp: "ACP `/acp`" } as const;

export function figuresOf(results: BenchResults): Figure[] {
  const out: Figure[] = [];
  const add = (label: string, value: number | null | undefined, better: Figure["better"]) => out.push({ label, value: value ?? null, better });

  for (const r of results.roundTrip) {
    const name = `\`session.list\`, ${r.clients} client${r.clients === 1 ? "" : "s"}, ${TARGETS[r.target] ?? r.target}`;
    add(`${name}: requests/s`, r.requestsPerSecond, "higher");
    add(`${name}: p50 ms`, r.p50Ms, "lower");
    add(`${name}: p99 ms`, r.p99Ms, "lower");
    if (r.target !== "direct") add(`${name}: relay CPU µs/request`, r.relayCpuUsPerRequest, "lower");
  }
  for (const s of results.streaming) {
    const name = `Streaming turn, ${TARGETS[s.target] ?? s.target}`;
    add(`${name}: messages/s`, s.messagesPerSecond, "higher");
    if (s.target !== "direct") add(`${name}: relay CPU µs/message`, s.relayCpuUsPerMessage, "lower");
  }
  for (const t of results.translation) {
    const name = `${SURFACES[t.dialect ?? "ask"]}, ${t.subscribers} connection${t.subscribers === 1 ? "" : "s"}`;
    add(`${name}: deltas/s`, t.deltasPerSecond, "higher");
    add(`${name}: gateway CPU µs/delta`, t.gatewayCpuUsPerDelta, "lower");
    add(`${name}: last delta → turn end p50 ms`, t.lagP50Ms, "lower");
  }
  for (const r of results.replicas ?? []) {
    const name = r.store === "redis" ? `Ask \`/rpc\`, ${r.subscribers} subscribers, ${r.replicas} replicas on Redis` : `Ask \`/rpc\`, ${r.subscribers} subscribers, 1 replica in memory`;
    add(`${name}: deltas/s`, r.deltasPerSecond, "higher");
    add(`${name}: gateway CPU µs/delta`, r.gatewayCpuUsPerDelta, "lower");
    add(`${name}: last delta → turn end p50 ms`, r.lagP50Ms, "lower");
  }
  for (const f of results.fanOut ?? []) {
    const name = `Fan-out to ${f.subscribers} subscriber${f.subscribers === 1 ? "" : "s"}`;
    add(`${name}, gateway: deltas/s`, f.gateway.deltasPerSecond, "higher");
    add(`${name}, gateway: CPU µs/delta`, f.gateway.cpuUsPerDelta, "lower");
  }
  for (const r of results.sessions ?? []) {
    add(`${r.sessions} sessions: gateway RSS KiB per idle session`, r.gateway.rssPerSessionKiB, "lower");
    add(`${r.sessions} sessions: gateway RSS KiB per attached client`, r.gateway.rssPerClientKiB, "lower");
    add(`${r.sessions} sessions: gateway CPU µs per attached client`, r.gateway.cpuPerClientUs, "lower");
  }
  const appServer = results.codexPeer?.find((r) => r.target === "gateway app-server");
  if (appServer) add("`app-server` over stdio: deltas/s", appServer.deltasPerSecond, "higher");
  for (const r of results.sendRound ?? []) {
    const name = r.target === "gateway" ? "Ask `session/send` → `turn.completed`" : "Direct `session.submit` → settled";
    add(`${name}: p50 ms`, r.p50Ms, "lower");
    add(`${name}: p99 ms`, r.p99Ms, "lower");
    if (r.target === "gateway") add(`${name}: gateway CPU µs/round`, r.gatewayCpuUsPerRound, "lower");
    add(`${name}: host CPU µs/round`, r.hostCpuUsPerRound, "lower");
  }
  if (results.validation) {
    add("`validate`: lines/s", results.validation.linesPerSecond, "higher");
    add("`validate`: peak RSS MiB", results.validation.peakRssMiB, "lower");
    if (results.validation.jobs) add("`validate --jobs 2`, two files: lines/s", results.validation.jobs.linesPerSecondJobs2, "higher");
  }
  for (const m of results.memory) add(`Idle WebSocket on \`${m.route}\`: KiB each`, m.perConnectionKiB, "lower");
  if (results.startup) add("Startup → `/readyz` 200: ms", results.startup.readyMs, "lower");
  if (results.startup?.cpuMs !== undefined) add("Startup → `/readyz` 200: gateway CPU ms", results.startup.cpuMs, "lower");
  return out;
}
