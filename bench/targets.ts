import type { BenchResults } from "./bench-results.js";
import { fmt, ratio } from "./stats.js";

/**
 * The targets of issue 38, each row as the run measured it against its baseline in the same run
 * (or, for `validate` and start-up, the figure itself) with the target beside it and whether it was
 * met. A row the run did not measure (its part left out by --only, no redis-server, no /proc) is
 * listed as not measured, never as met.
 */

export interface TargetRow {
  row: string;
  /** What was compared, in words (the baseline of a ratio). */
  against: string;
  /** The measured ratio or figure; null when the run did not measure it. */
  measured: number | null;
  unit: "×" | "lines/s" | "ms";
  /** The bound and which side of it is the target. */
  bound: number;
  better: "at most" | "at least";
  met: boolean | null;
}

type Spec = Omit<TargetRow, "met">;

export function targetRows(results: BenchResults): TargetRow[] {
  const specs: Spec[] = [];
  const add = (row: string, against: string, measured: number | null | undefined, unit: TargetRow["unit"], better: TargetRow["better"], bound: number) =>
    specs.push({ row, against, measured: measured ?? null, unit, better, bound });

  const single = results.replicas?.find((r) => r.store === "memory");
  const three = results.replicas?.find((r) => r.store === "redis" && r.replicas === 3);
  const subscribers = three?.subscribers ?? single?.subscribers ?? 30;
  add(`Ask, ${subscribers} subscribers, 3 replicas on one Redis: gateway CPU per delta`, "1 replica in memory", ratio(three?.gatewayCpuUsPerDelta ?? undefined, single?.gatewayCpuUsPerDelta ?? undefined), "×", "at most", 2);
  add(`Ask, ${subscribers} subscribers, 3 replicas on one Redis: deltas/s delivered`, "1 replica in memory", ratio(three?.deltasPerSecond, single?.deltasPerSecond), "×", "at least", 0.6);

  const sendGateway = results.sendRound?.find((r) => r.target === "gateway");
  const sendDirect = results.sendRound?.find((r) => r.target === "direct");
  add("Ask `session/send` → `turn.completed`: gateway CPU per round", "the host's CPU per round of the same rounds", ratio(sendGateway?.gatewayCpuUsPerRound ?? undefined, sendGateway?.hostCpuUsPerRound ?? undefined), "×", "at most", 1);
  add("Ask `session/send` → `turn.completed`: p50", "`session.submit` → settled, direct", ratio(sendGateway?.p50Ms, sendDirect?.p50Ms), "×", "at most", 1.5);

  const v = results.validation;
  add(`\`tau-gateway validate\`, ${v ? fmt(v.lines) : "200,000"} lines: lines/s`, "(a rate, one process)", v?.linesPerSecond, "lines/s", "at least", 250_000);
  add("`tau-gateway validate --jobs 2`, two files: lines/s", "`--jobs 1` on the same files", ratio(v?.jobs?.linesPerSecondJobs2, v?.jobs?.linesPerSecondJobs1), "×", "at least", 1.5);
  add("`serve` spawn → first `/readyz` 200", "(a time, median of the runs)", results.startup?.readyMs, "ms", "at most", 250);

  const rt = (target: string, clients: number) => results.roundTrip.find((r) => r.target === target && r.clients === clients);
  const st = (target: string) => results.streaming.find((r) => r.target === target);
  for (const clients of [1, 32]) {
    const label = `\`/tau\` relay, \`session.list\`, ${clients} client${clients === 1 ? "" : "s"}`;
    add(`${label}: relay CPU per request`, "the no-op Node.js relay", ratio(rt("gateway", clients)?.relayCpuUsPerRequest ?? undefined, rt("node", clients)?.relayCpuUsPerRequest ?? undefined), "×", "at most", 1.15);
    add(`${label}: requests/s`, "the no-op Node.js relay", ratio(rt("gateway", clients)?.requestsPerSecond, rt("node", clients)?.requestsPerSecond), "×", "at least", 0.95);
  }
  add("`/tau` relay, streaming turn: relay CPU per message", "the no-op Node.js relay", ratio(st("gateway")?.relayCpuUsPerMessage ?? undefined, st("node")?.relayCpuUsPerMessage ?? undefined), "×", "at most", 1.15);
  add("`/tau` relay, streaming turn: messages/s", "the no-op Node.js relay", ratio(st("gateway")?.messagesPerSecond, st("node")?.messagesPerSecond), "×", "at least", 0.95);

  return specs.map((spec) => ({ ...spec, met: spec.measured === null ? null : spec.better === "at most" ? spec.measured <= spec.bound : spec.measured >= spec.bound }));
}

const show = (value: number, unit: TargetRow["unit"]) => (unit === "×" ? `${value.toFixed(2)}×` : `${fmt(value)} ${unit}`);

/** The "targets" summary that ends the report: row, measured, target, met or missed. */
export function targetsReport(rows: readonly TargetRow[]): string {
  const lines = ["| Target (issue 38) | Against | Measured | Target | |", "| --- | --- | ---: | ---: | --- |"];
  for (const r of rows) {
    const verdict = r.met === null ? "not measured" : r.met ? "met" : "**missed**";
    lines.push(`| ${r.row} | ${r.against} | ${r.measured === null ? "–" : show(r.measured, r.unit)} | ${r.better === "at most" ? "≤" : "≥"} ${show(r.bound, r.unit)} | ${verdict} |`);
  }
  const measured = rows.filter((r) => r.met !== null);
  lines.push("", `Targets met: ${measured.filter((r) => r.met).length} of ${measured.length} measured (${rows.length - measured.length} not measured in this run).`);
  return lines.join("\n");
}
