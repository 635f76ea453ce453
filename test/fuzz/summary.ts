import type { FuzzReport } from "./engine.js";

/** The per-target summary table `npm run fuzz` prints (and the CI run logs). */

const mb = (bytes: number | undefined) => (bytes === undefined ? "-" : (bytes / 1024 / 1024).toFixed(0));

function errorsByCode(errors: Map<string, number>): string {
  const sorted = [...errors].sort((a, b) => b[1] - a[1]);
  return sorted.map(([code, n]) => `${code}×${n}`).join(" ") || "-";
}

export function summaryTable(reports: readonly FuzzReport[]): string {
  const header = ["target", "cases", "requests", "responses", "cases/s", "violations", "upstream msgs", "peak RSS MB", "heap MB before→after", "duration s", "errors by code"];
  const rows = reports.map((r) => [
    r.target,
    String(r.cases),
    String(r.requests),
    String(r.responses),
    r.durationMs > 0 ? (r.cases / (r.durationMs / 1000)).toFixed(0) : "-",
    String(r.violations),
    `${r.upstreamMessages}${r.upstreamViolations ? ` (${r.upstreamViolations} invalid)` : ""}`,
    mb(r.after?.peakRssBytes ?? r.baseline?.peakRssBytes),
    `${mb(r.baseline?.heapUsedBytes)}→${mb(r.after?.heapUsedBytes)}`,
    (r.durationMs / 1000).toFixed(1),
    errorsByCode(r.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (i === header.length - 1 ? 0 : row[i]!.length))));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
