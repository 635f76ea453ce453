import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Explains the differences the harness finds, from the list in differences.json (data: each entry
 * a pattern over difference lines, the references it applies to, and why the gateway does
 * otherwise), and sums them up per reference as the table the harness prints.
 */

export interface Explanation {
  /** A difference line; `*` stands for any text. */
  difference: string;
  /** Where it applies: "codex" (every Codex release), "codex 0.171.0", "codex-acp". */
  reference: string;
  /** Only in these scenarios (every scenario when absent). */
  scenarios?: string[];
  /** Why: what Tau has no counterpart for, or what the gateway deliberately does otherwise. */
  reason: string;
  /** Set when the fix belongs to work done elsewhere (the difference is then counted as pending, not explained). */
  pending?: string;
  /**
   * Set when the reference does this in some runs only (a race inside the real server, its order
   * varying from run to run): the entry explains the difference when it comes, and is not stale
   * in a run without it.
   */
  varies?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
export const DIFFERENCES_FILE = join(here, "differences.json");

export function loadExplanations(file = DIFFERENCES_FILE): Explanation[] {
  const entries = JSON.parse(readFileSync(file, "utf8")) as Explanation[];
  for (const entry of entries) {
    if (!entry.difference || !entry.reference || !entry.reason?.trim()) throw new Error(`${file}: every entry needs a difference, a reference and a reason: ${JSON.stringify(entry)}`);
  }
  return entries;
}

const patterns = new Map<string, RegExp>();
function matches(pattern: string, line: string): boolean {
  let regex = patterns.get(pattern);
  if (!regex) {
    regex = new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
    patterns.set(pattern, regex);
  }
  return regex.test(line);
}

/** Whether an entry applies to a reference named like "codex 0.169.0" or "codex-acp". */
const appliesTo = (entry: Explanation, reference: string) => entry.reference === reference || reference.startsWith(`${entry.reference} `);

export interface ScenarioVerdict {
  scenario: string;
  differences: Array<{ line: string; explanation?: Explanation }>;
  verdict: "identical" | "explained" | "pending" | "unexplained";
}

export function judge(reference: string, scenario: string, lines: string[], explanations: Explanation[], used: Set<Explanation>): ScenarioVerdict {
  const differences = lines.map((line) => {
    const explanation = explanations.find((e) => appliesTo(e, reference) && (!e.scenarios || e.scenarios.includes(scenario)) && matches(e.difference, line));
    if (explanation) used.add(explanation);
    return explanation ? { line, explanation } : { line };
  });
  const verdict = differences.length === 0 ? "identical" : differences.some((d) => !d.explanation) ? "unexplained" : differences.some((d) => d.explanation!.pending) ? "pending" : "explained";
  return { scenario, differences, verdict };
}

export interface ReferenceReport {
  reference: string;
  verdicts: ScenarioVerdict[];
}

export const count = (report: ReferenceReport, verdict: ScenarioVerdict["verdict"]) => report.verdicts.filter((v) => v.verdict === verdict).length;

/** The table: one row per reference. */
export function table(reports: ReferenceReport[]): string {
  const header = ["reference", "scenarios", "identical", "explained", "pending elsewhere", "unexplained"];
  const rows = reports.map((r) => [r.reference, String(r.verdicts.length), String(count(r, "identical")), String(count(r, "explained")), String(count(r, "pending")), String(count(r, "unexplained"))]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** Every unexplained difference, and every pending one, by scenario. */
export function details(reports: ReferenceReport[]): string {
  const out: string[] = [];
  for (const report of reports) {
    for (const verdict of report.verdicts) {
      const open = verdict.differences.filter((d) => !d.explanation || d.explanation.pending);
      if (open.length === 0) continue;
      out.push(`${report.reference} · ${verdict.scenario}`);
      for (const d of open) out.push(`  ${d.explanation ? `[pending: ${d.explanation.pending}] ` : ""}${d.line}`);
    }
  }
  return out.join("\n");
}

/** Entries that explained nothing in the references that ran (stale: the difference is gone), but for those whose difference varies between runs of the reference. */
export function unused(explanations: Explanation[], used: Set<Explanation>, referencesRun: string[]): Explanation[] {
  return explanations.filter((e) => !e.varies && !used.has(e) && referencesRun.some((reference) => appliesTo(e, reference)));
}
