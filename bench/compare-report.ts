import type { Build } from "./compare-plan.js";
import type { RowComparison } from "./compare-stats.js";
import { fmt } from "./stats.js";

/** What `npm run bench -- --compare <ref>` prints: how it was run, how to read it, then one row per figure. */

export interface ComparisonSetting {
  /** The two builds as a reader should know them, e.g. "main (bf8c766)" and "working tree (db4c209 + uncommitted changes)". */
  old: string;
  new: string;
  schedule: readonly Build[];
  /** Runs that failed, with why: their figures are missing. */
  failedRuns: readonly string[];
  quick: boolean;
  /** --only sections; undefined: every part. */
  only: readonly string[] | undefined;
  /** The notes each build's runs reported (auth, skipped rows, load), each once. */
  notes: Record<Build, readonly string[]>;
  /** Machine, Node and load, one line. */
  machine: string;
}

/** Enough significant digits for a figure of any size. */
export function figure(value: number | null): string {
  if (value === null) return "–";
  const size = Math.abs(value);
  return fmt(value, size >= 100 ? 0 : size >= 10 ? 1 : size >= 1 ? 2 : 3);
}

function cell(values: readonly number[], median: number | null): string {
  if (values.length < 2) return figure(median);
  return `${figure(median)} (${figure(Math.min(...values))}–${figure(Math.max(...values))})`;
}

const VERDICT = { worse: "**worse**", better: "better", "within noise": "within noise", "no noise estimate": "no noise estimate", "not measured": "not measured" } as const;

export function comparisonReport(setting: ComparisonSetting, rows: readonly RowComparison[]): string {
  const rounds = setting.schedule.length / 2;
  const worse = rows.filter((r) => r.verdict === "worse");
  const compared = rows.filter((r) => r.verdict !== "not measured").length;
  const summary =
    rounds < 2
      ? `**One round: no noise estimate**, so no verdicts. Rerun with \`--rounds 3\` or more before drawing conclusions.`
      : worse.length === 0
        ? `**No figure is worse beyond noise** (${compared} compared).`
        : `**${worse.length} of ${compared} figures worse beyond noise:** ${worse.map((r) => r.label).join("; ")}.`;
  const lines = [
    `## Benchmark comparison: new = ${setting.new}, old = ${setting.old}`,
    "",
    summary,
    ...(setting.failedRuns.length === 0 ? [] : ["", `**${setting.failedRuns.length} run${setting.failedRuns.length === 1 ? "" : "s"} failed**, so the figures below are from fewer rounds than planned:`, ...setting.failedRuns.map((failure) => `- ${failure}`)]),
    "",
    `How it ran: ${rounds} round${rounds === 1 ? "" : "s"}, each running ${setting.only ? `the benchmark's ${setting.only.join(", ")} (\`--only\`)` : "the whole benchmark"} once per build (every part in processes of its own), one after the other in this order: ${setting.schedule.join(", ")}. Every other round swaps the builds so a machine that gets busier or quieter weighs on both alike.${setting.quick ? " `--quick` windows: for trying the harness, not for reporting." : ""}`,
    "",
    "How to read it:",
    "- **Old**, **New**: the median of the build's rounds, and in brackets the lowest and highest round.",
    "- **New ÷ old**: the new median over the old one. ↑ rows are better higher (rates), ↓ rows better lower (latency, CPU, memory).",
    "- **Noise**: how far the same build moved from round to round on this machine: its highest round over its lowest, less 1, for whichever of the two builds moved more.",
    "- **Verdict**: **worse** when the new build is worse than the old by a larger factor than the noise (new ÷ old above 1 + noise where lower is better, old ÷ new above it where higher is better), better likewise the other way, within noise otherwise. The rows through nginx and the Node.js relay run the same relay against each build's Tau host: they show the machine's noise as much as anything.",
    "",
    "| Figure | Old | New | New ÷ old | Noise | Verdict |",
    "| --- | ---: | ---: | ---: | ---: | --- |",
    ...rows.map((r) => {
      const ratio = r.ratio === null ? "–" : `${r.ratio.toFixed(2)}×`;
      const noise = r.noise === null ? "–" : `±${Math.round(r.noise * 100)}%`;
      return `| ${r.label} ${r.better === "higher" ? "↑" : "↓"} | ${cell(r.old, r.oldMedian)} | ${cell(r.new, r.newMedian)} | ${ratio} | ${noise} | ${VERDICT[r.verdict]} |`;
    }),
    "",
    setting.machine,
    ...notesOf(setting.notes),
  ];
  return lines.join("\n");
}

/** Each note once: those both builds' runs gave, then those only one build's runs gave (the differences a reader should see). */
function notesOf(notes: Record<Build, readonly string[]>): string[] {
  const unique = (list: readonly string[]) => [...new Set(list)];
  const both = unique(notes.old).filter((note) => notes.new.includes(note));
  const only = (build: Build) => unique(notes[build]).filter((note) => !both.includes(note)).map((note) => `- ${build} build only: ${note}`);
  return [...both.map((note) => `- ${note}`), ...only("old"), ...only("new")];
}
