import { HOSTILE_STALL_TARGET_MS } from "./hostile.js";
import { scaleReport } from "./scale-report.js";
import { targetRows, targetsReport } from "./targets.js";
import type { BenchResults } from "./bench-results.js";
import { fmt, ratio } from "./stats.js";

/** `node` is bench/node-relay-server.mjs: frames passed on unchecked by Node.js and `ws` (absent in older results). */
type Path = "direct" | "nginx" | "node" | "gateway";

const rt = (results: BenchResults, target: Path, clients: number) => results.roundTrip.find((r) => r.target === target && r.clients === clients);
const st = (results: BenchResults, target: Path) => results.streaming.find((r) => r.target === target);

/** gateway/direct and gateway/nginx for throughput and p50, per concurrency, plus streaming and the Ask send round. */
export function computeRatios(results: Pick<BenchResults, "roundTrip" | "streaming" | "sendRound">): Record<string, number | null> {
  const r = results as BenchResults;
  const out: Record<string, number | null> = {};
  for (const clients of [1, 32]) {
    for (const base of ["direct", "nginx", "node"] as const) {
      out[`roundTrip${clients}.throughput.gateway/${base}`] = ratio(rt(r, "gateway", clients)?.requestsPerSecond, rt(r, base, clients)?.requestsPerSecond);
      out[`roundTrip${clients}.p50.gateway/${base}`] = ratio(rt(r, "gateway", clients)?.p50Ms, rt(r, base, clients)?.p50Ms);
      if (base !== "direct") out[`roundTrip${clients}.cpu.gateway/${base}`] = ratio(rt(r, "gateway", clients)?.relayCpuUsPerRequest ?? undefined, rt(r, base, clients)?.relayCpuUsPerRequest ?? undefined);
    }
  }
  for (const base of ["direct", "nginx", "node"] as const) out[`streaming.throughput.gateway/${base}`] = ratio(st(r, "gateway")?.messagesPerSecond, st(r, base)?.messagesPerSecond);
  for (const base of ["nginx", "node"] as const) out[`streaming.cpu.gateway/${base}`] = ratio(st(r, "gateway")?.relayCpuUsPerMessage ?? undefined, st(r, base)?.relayCpuUsPerMessage ?? undefined);
  const sendRound = (target: string) => r.sendRound?.find((s) => s.target === target)?.p50Ms;
  out["sendRound.p50.gateway/direct"] = ratio(sendRound("gateway"), sendRound("direct"));
  return out;
}

export function markdownReport(results: BenchResults): string {
  const cell = (value: number | null | undefined, decimals = 0) => fmt(value, decimals);
  const x = (value: number | null | undefined) => (value === null || value === undefined ? "–" : `${value.toFixed(2)}×`);
  // Columns: the three ways to reach the host besides the gateway, the gateway, then the gateway's ratio to each.
  const paths: Path[] = ["direct", "nginx", "node", "gateway"];
  const row = (label: string, values: Array<number | undefined>, decimals = 0) => {
    const gatewayValue = values[3];
    const vs = values.slice(0, 3).map((base) => x(ratio(gatewayValue, base)));
    return `| ${label} | ${values.map((v) => cell(v, decimals)).join(" | ")} | ${vs.join(" | ")} |`;
  };
  const relay: string[] = [
    "| Relay (Tau protocol) | Direct to host | nginx | Node.js `ws` relay, no checks | Gateway `/tau` | Gateway ÷ direct | Gateway ÷ nginx | Gateway ÷ Node.js relay |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const clients of [1, 32]) {
    const runs = paths.map((p) => rt(results, p, clients));
    const label = `\`session.list\`, ${clients} client${clients === 1 ? "" : "s"}`;
    relay.push(row(`${label}: requests/s`, runs.map((r) => r?.requestsPerSecond)));
    relay.push(row(`${label}: p50 ms`, runs.map((r) => r?.p50Ms), 3));
    relay.push(row(`${label}: p99 ms`, runs.map((r) => r?.p99Ms), 3));
    relay.push(row(`${label}: relay CPU µs/request`, runs.map((r) => r?.relayCpuUsPerRequest ?? undefined), 1));
  }
  const deltas = results.streaming[0]?.deltas ?? 0;
  const streams = paths.map((p) => st(results, p));
  relay.push(row(`Streaming turn, ${fmt(deltas)} deltas: messages/s`, streams.map((r) => r?.messagesPerSecond)));
  relay.push(row(`Streaming turn: relay CPU µs/message`, streams.map((r) => r?.relayCpuUsPerMessage ?? undefined), 1));

  const gateway: string[] = ["| Gateway | Result |", "| --- | --- |"];
  const surfaces = { ask: ["Ask `/rpc`", "subscriber"], codex: ["Codex app-server `/`", "connection"], acp: ["ACP `/acp`", "connection"] } as const;
  for (const t of results.translation) {
    const [surface, who] = surfaces[t.dialect ?? "ask"];
    // Older results have no per-delta figures (one event per delta then).
    const perDelta = t.deltasPerSecond === undefined ? "" : `${fmt(t.deltasPerSecond)} deltas/s (`;
    const cpu = t.gatewayCpuUsPerDelta === undefined ? `${fmt(t.gatewayCpuUsPerEvent, 1)} µs gateway CPU each` : `${fmt(t.gatewayCpuUsPerDelta, 2)} µs gateway CPU per delta`;
    gateway.push(
      `| ${surface}, ${t.subscribers} ${who}${t.subscribers === 1 ? "" : "s"} (${fmt(t.deltas)} deltas, ${fmt(t.eventsPerSubscriber)} events each) | ${perDelta}${fmt(t.eventsPerSecond)} events/s${perDelta ? ")" : ""} delivered, ${cpu}; host's last delta → ${TURN_END[t.dialect ?? "ask"]} p50 ${fmt(t.lagP50Ms, 1)} ms, max ${fmt(t.lagMaxMs, 1)} ms${t.disconnected ? `; ${t.disconnected} subscribers disconnected by the gateway` : ""} |`,
    );
  }
  for (const r of results.replicas ?? []) {
    const where = r.store === "redis" ? `${r.replicas} replica${r.replicas === 1 ? "" : "s"} on one Redis (\`--store redis://…\`)${r.replicas === 1 ? "" : ", subscribers spread over them"}` : "1 replica, `--store memory`";
    const redisCpu = r.store === "redis" ? ` + ${fmt(r.redisCpuUsPerDelta, 2)} µs Redis CPU` : "";
    gateway.push(
      `| Ask \`/rpc\`, ${r.subscribers} subscribers, ${where} (${fmt(r.deltas)} deltas, ${fmt(r.eventsPerSubscriber)} events each) | ${fmt(r.deltasPerSecond)} deltas/s (${fmt(r.eventsPerSecond)} events/s) delivered, ${fmt(r.gatewayCpuUsPerDelta, 2)} µs gateway CPU per delta${redisCpu}; host's last delta → \`turn.completed\` p50 ${fmt(r.lagP50Ms, 1)} ms, max ${fmt(r.lagMaxMs, 1)} ms${r.disconnected ? `; ${r.disconnected} subscribers disconnected by the gateway` : ""} |`,
    );
  }
  const peer = results.codexPeer?.find((r) => r.target === "codex app-server");
  const ours = results.codexPeer?.find((r) => r.target === "gateway app-server");
  if (peer && ours) {
    gateway.push(
      `| Codex app-server over stdio, one ${fmt(ours.deltas)}-delta reply (median of ${ours.runs.length} turns) | \`tau-gateway app-server\` ${fmt(ours.deltasPerSecond)} deltas/s (${fmt(ours.notificationsPerSecond)} \`item/agentMessage/delta\`/s) vs the real \`codex app-server\` against a mock model API ${fmt(peer.deltasPerSecond)} deltas/s (${fmt(peer.notificationsPerSecond)}/s; runs ${peer.runs.map((r) => fmt(r)).join(", ")}), ${x(ratio(ours.deltasPerSecond, peer.deltasPerSecond))} |`,
    );
  }
  const direct = results.sendRound?.find((r) => r.target === "direct");
  const viaGateway = results.sendRound?.find((r) => r.target === "gateway");
  if (direct && viaGateway) {
    gateway.push(
      `| Ask \`session/send\` → \`turn.completed\`, one-line reply (${fmt(viaGateway.rounds)} rounds) | p50 ${fmt(viaGateway.p50Ms, 2)} ms vs ${fmt(direct.p50Ms, 2)} ms direct (\`session.submit\` → settled), ${x(ratio(viaGateway.p50Ms, direct.p50Ms))}; p99 ${fmt(viaGateway.p99Ms, 2)} vs ${fmt(direct.p99Ms, 2)} ms; ${fmt(viaGateway.gatewayCpuUsPerRound)} µs gateway CPU per round (host ${fmt(viaGateway.hostCpuUsPerRound)} µs through the gateway, ${fmt(direct.hostCpuUsPerRound)} µs direct) |`,
    );
  }
  const v = results.validation;
  if (v) {
    gateway.push(
      `| \`tau-gateway validate\`, ${fmt(v.lines)} lines (${fmt(v.bytes / 2 ** 20, 1)} MiB) | ${fmt(v.linesPerSecond)} lines/s (${fmt(v.seconds, 2)} s incl. ${fmt(v.fixedCostMs)} ms start-up${v.cpuLinesPerSecond ? `; ${fmt(v.cpuLinesPerSecond)} lines per CPU second` : ""}); peak RSS ${fmt(v.peakRssMiB, 1)} MiB (${v.memoryMethod.startsWith("GNU") ? "GNU time" : "maxRSS at exit"})${v.invalid ? `; ${fmt(v.invalid)} lines INVALID` : ""} |`,
    );
    if (v.jobs) {
      gateway.push(
        `| \`tau-gateway validate --jobs 2\`, the same lines as ${v.jobs.files} files | ${fmt(v.jobs.linesPerSecondJobs2)} lines/s vs ${fmt(v.jobs.linesPerSecondJobs1)} with \`--jobs 1\`, ${x(ratio(v.jobs.linesPerSecondJobs2, v.jobs.linesPerSecondJobs1))}${v.jobs.parallelCeiling === undefined ? "" : ` (two threads of plain CPU work scaled ${x(v.jobs.parallelCeiling)} over one at the time)`} |`,
      );
    }
  }
  for (const m of results.memory) {
    gateway.push(
      m.afterFirstMiB === undefined
        ? `| Idle WebSocket on \`${m.route}\` (${fmt(m.connections)} open) | ${fmt(m.perConnectionKiB, 1)} KiB each (RSS ${fmt(m.baselineMiB, 1)} → ${fmt(m.loadedMiB, 1)} MiB)${m.route === "/tau" ? ", upstream connection included" : ""} |`
        : `| Idle WebSocket on \`${m.route}\` (${fmt(m.connections)} open) | ${fmt(m.perConnectionKiB, 1)} KiB each from ${fmt(m.firstConnections)} to ${fmt(m.connections)} open (RSS ${fmt(m.baselineMiB, 1)} → ${fmt(m.afterFirstMiB, 1)} → ${fmt(m.loadedMiB, 1)} MiB; ${fmt(m.averageKiB, 1)} KiB each over the baseline)${m.route === "/tau" ? ", upstream connection included" : ""} |`,
    );
  }
  const s = results.startup;
  if (s) gateway.push(`| Startup, \`serve\` with embedded host → \`/readyz\` 200 | ${fmt(s.readyMs)} ms (median of ${s.runs}; listening after ${fmt(s.listeningMs)} ms${s.cpuMs === undefined || !Number.isFinite(s.cpuMs) ? "" : `; ${fmt(s.cpuMs)} ms of gateway CPU`}) |`);

  const patterns: string[] = [
    "| String field pattern | Fields | Slowest 1 MiB input found | Validation ms | Plain 1 MiB of `a` ms |",
    "| --- | ---: | --- | ---: | ---: |",
  ];
  for (const p of results.patterns) {
    const worst = p.worstMs === null ? `not run (${p.skipped})` : cell(p.worstMs, 1);
    patterns.push(`| ${code(p.pattern)} | ${fmt(p.fields)} | ${code(p.worstInput)} | ${worst} | ${cell(p.plainMs, 1)} |`);
  }

  const hostile: string[] = [
    `| Hostile input (defaults) | Answer | Worst event-loop stall ms (target ≤ ${HOSTILE_STALL_TARGET_MS}) |`,
    "| --- | --- | ---: |",
  ];
  for (const h of results.hostile ?? []) hostile.push(`| ${h.input} | ${h.outcome} | ${fmt(h.worstStallMs)}${h.worstStallMs > HOSTILE_STALL_TARGET_MS ? " (over)" : ""} |`);

  const m = results.machine;
  const about = [
    `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, ${m.kernel}${results.nginx ? `, nginx ${results.nginx}` : ""}; load average ${m.loadAverage.join(" / ")} (1/5/15 min) at the start.`,
    `Run ${results.startedAt}, ${fmt(results.durationSeconds)} s.`,
  ];
  return [
    relay.join("\n"),
    "",
    gateway.join("\n"),
    "",
    ...scaleReport(results),
    patterns.join("\n"),
    "",
    ...(results.hostile?.length ? [hostile.join("\n"), ""] : []),
    about.join(" "),
    ...results.notes.map((n) => `- ${n}`),
    "",
    targetsReport(targetRows(results)),
  ].join("\n");
}

/** What tells each dialect's clients the turn has ended (the lag is measured to it). */
const TURN_END = { ask: "`turn.completed`", codex: "`turn/completed`", acp: "`usage_update`" } as const;

/** Inline code in a table cell: a pipe would end the cell. */
const code = (text: string) => `\`${text.replace(/\|/g, "\\|")}\``;

/** bench/results/latest.md: the report of the latest full run, under a heading that says what it is. */
export function latestMarkdown(results: BenchResults): string {
  return [
    "# Latest benchmark run",
    "",
    `\`npm run bench\` of ${results.startedAt}, written by the run itself (bench/results/latest.json holds every figure). What each row measures, and how to read it: [docs/performance.md](../../docs/performance.md).`,
    "",
    markdownReport(results),
    "",
  ].join("\n");
}
