import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { figuresOf, type Figure } from "../../bench/compare-figures.js";
import { alternationSchedule, parseRounds } from "../../bench/compare-plan.js";
import { comparisonReport, figure, type ComparisonSetting } from "../../bench/compare-report.js";
import { compareRounds, middle, relativeSpread, verdictOf } from "../../bench/compare-stats.js";
import { resolveRef } from "../../bench/compare.js";
import { SECTIONS, selectSections } from "../../bench/sections.js";
import type { BenchResults } from "../../bench/bench-results.js";

/** `npm run bench -- --compare <ref>`: the order of the runs, the statistics and the table (the runs themselves are not run here). */

const latest = JSON.parse(readFileSync(new URL("../../bench/results/latest.json", import.meta.url), "utf8")) as BenchResults;

describe("the alternation schedule", () => {
  it("runs both builds every round and swaps their order every other round", () => {
    expect(alternationSchedule(1)).toEqual(["old", "new"]);
    expect(alternationSchedule(3)).toEqual(["old", "new", "new", "old", "old", "new"]);
  });

  it("gives each build the first place as often as the other over an even number of rounds", () => {
    const schedule = alternationSchedule(4);
    const places = (build: string) => schedule.flatMap((b, i) => (b === build ? [i] : [])).reduce((a, b) => a + b, 0);
    expect(places("old")).toBe(places("new"));
  });

  it("refuses rounds that are not a whole number of at least 1", () => {
    expect(() => alternationSchedule(0)).toThrow("rounds must be a whole number of at least 1, not 0");
    expect(() => alternationSchedule(1.5)).toThrow("not 1.5");
    expect(parseRounds("5")).toBe(5);
    for (const text of ["0", "-2", "2.5", "three", ""]) expect(() => parseRounds(text), text).toThrow(`--rounds takes a whole number of at least 1`);
  });
});

describe("the comparison statistics", () => {
  it("takes the middle value, the mean of the two middle ones for an even count", () => {
    expect(middle([5, 1, 3])).toBe(3);
    expect(middle([4, 1, 3, 2])).toBe(2.5);
    expect(middle([])).toBeNull();
  });

  it("measures a build's noise as highest ÷ lowest − 1, and has none from one round", () => {
    expect(relativeSpread([100, 90, 110])).toBeCloseTo(110 / 90 - 1);
    expect(relativeSpread([0, 5])).toBeNull();
    expect(relativeSpread([100])).toBeNull();
  });

  it("calls a figure worse only when it moved the wrong way by more than the noise", () => {
    expect(verdictOf(1.2, 0.1, "lower")).toBe("worse");
    expect(verdictOf(1.05, 0.1, "lower")).toBe("within noise");
    expect(verdictOf(0.8, 0.1, "lower")).toBe("better");
    expect(verdictOf(0.8, 0.1, "higher")).toBe("worse");
    expect(verdictOf(1.2, 0.1, "higher")).toBe("better");
    expect(verdictOf(0.95, 0.1, "higher")).toBe("within noise");
    expect(verdictOf(2, null, "lower")).toBe("no noise estimate");
    expect(verdictOf(null, 0.1, "lower")).toBe("not measured");
  });

  it("lines the rounds up by row, leaves unmeasured rounds out and compares the medians", () => {
    const round = (build: "old" | "new", rate: number, cpu: number | null): { build: "old" | "new"; figures: Figure[] } => ({
      build,
      figures: [
        { label: "rate", value: rate, better: "higher" },
        { label: "cpu", value: cpu, better: "lower" },
      ],
    });
    const [rate, cpu] = compareRounds([round("old", 100, 10), round("new", 80, 10), round("new", 78, null), round("old", 104, 11), round("old", 102, 10.5), round("new", 82, 12)]);
    expect(rate).toMatchObject({ label: "rate", old: [100, 104, 102], new: [80, 78, 82], oldMedian: 102, newMedian: 80, verdict: "worse" });
    expect(rate!.ratio).toBeCloseTo(80 / 102);
    expect(rate!.noise).toBeCloseTo(82 / 78 - 1); // the new build's spread, the larger of the two
    expect(cpu).toMatchObject({ old: [10, 11, 10.5], new: [10, 12], oldMedian: 10.5, newMedian: 11, verdict: "within noise" });
  });

  it("does not call a build worse for one slow round of the other: the noise is a factor, like the ratio", () => {
    // Rates of a loaded machine: the old build's rounds differ 13-fold, the new build's medians are lower.
    const [rate] = compareRounds([
      { build: "old", figures: [{ label: "rate", value: 687, better: "higher" }] },
      { build: "new", figures: [{ label: "rate", value: 623, better: "higher" }] },
      { build: "new", figures: [{ label: "rate", value: 849, better: "higher" }] },
      { build: "old", figures: [{ label: "rate", value: 8789, better: "higher" }] },
    ]);
    expect(rate!.verdict).toBe("within noise");
  });
});

describe("the figures of a run", () => {
  const figures = figuresOf(latest);

  it("names each figure once, with the direction that is better", () => {
    expect(new Set(figures.map((f) => f.label)).size).toBe(figures.length);
    expect(figures).toContainEqual({ label: "`session.list`, 1 client, gateway `/tau`: requests/s", value: latest.roundTrip.find((r) => r.target === "gateway" && r.clients === 1)!.requestsPerSecond, better: "higher" });
    expect(figures).toContainEqual({ label: "Startup → `/readyz` 200: ms", value: latest.startup!.readyMs, better: "lower" });
    expect(figures.find((f) => f.label === "ACP `/acp`, 100 connections: gateway CPU µs/delta")?.better).toBe("lower");
  });

  it("leaves out what is not part of either build: relay CPU of a direct connection, pattern validation, the real codex", () => {
    expect(figures.some((f) => f.label.includes("direct to host: relay CPU"))).toBe(false);
    expect(figures.some((f) => /pattern|codex app-server/i.test(f.label))).toBe(false);
  });
});

describe("the comparison table", () => {
  const setting = (rounds: number): ComparisonSetting => ({
    old: "main (abc1234567)",
    new: "working tree (def7654321)",
    schedule: alternationSchedule(rounds),
    failedRuns: [],
    quick: false,
    only: undefined,
    notes: { old: ["gateway with bearer-token auth", "old note"], new: ["gateway with bearer-token auth", "new note"] },
    machine: "Test machine.",
  });
  const rows = compareRounds([
    { build: "old", figures: [{ label: "rate", value: 1000, better: "higher" }, { label: "p50 ms", value: 0.2, better: "lower" }] },
    { build: "new", figures: [{ label: "rate", value: 700, better: "higher" }, { label: "p50 ms", value: 0.21, better: "lower" }] },
    { build: "new", figures: [{ label: "rate", value: 720, better: "higher" }, { label: "p50 ms", value: 0.19, better: "lower" }] },
    { build: "old", figures: [{ label: "rate", value: 1010, better: "higher" }, { label: "p50 ms", value: 0.22, better: "lower" }] },
  ]);

  it("names both builds, lists the figures worse beyond noise first, and gives each row both builds, the ratio and the noise", () => {
    const text = comparisonReport(setting(2), rows);
    expect(text).toContain("## Benchmark comparison: new = working tree (def7654321), old = main (abc1234567)");
    expect(text).toContain("**1 of 2 figures worse beyond noise:** rate.");
    expect(text).toContain("in this order: old, new, new, old.");
    expect(text).toContain("each running the whole benchmark once per build");
    expect(comparisonReport({ ...setting(2), only: ["round-trip", "startup"] }, rows)).toContain("each running the benchmark's round-trip, startup (`--only`) once per build");
    expect(text).toContain("| rate ↑ | 1,005 (1,000–1,010) | 710 (700–720) | 0.71× | ±3% | **worse** |");
    expect(text).toContain("| p50 ms ↓ | 0.210 (0.200–0.220) | 0.200 (0.190–0.210) | 0.95× | ±11% | within noise |");
  });

  it("says a single round gives no verdicts", () => {
    const one = compareRounds([
      { build: "old", figures: [{ label: "rate", value: 1000, better: "higher" }] },
      { build: "new", figures: [{ label: "rate", value: 500, better: "higher" }] },
    ]);
    const text = comparisonReport(setting(1), one);
    expect(text).toContain("**One round: no noise estimate**");
    expect(text).toContain("| rate ↑ | 1,000 | 500 | 0.50× | – | no noise estimate |");
  });

  it("says which runs failed, when some did", () => {
    expect(comparisonReport(setting(2), rows)).not.toContain("failed");
    const text = comparisonReport({ ...setting(2), failedRuns: ["run 3 of 4 (new build): exit 1"] }, rows);
    expect(text).toContain("**1 run failed**, so the figures below are from fewer rounds than planned:\n- run 3 of 4 (new build): exit 1");
  });

  it("gives notes both builds' runs gave once, and says which build gave the others", () => {
    const text = comparisonReport(setting(2), rows);
    expect(text.match(/gateway with bearer-token auth/g)).toHaveLength(1);
    expect(text).toContain("- old build only: old note");
    expect(text).toContain("- new build only: new note");
  });

  it("shows small and large figures with enough digits", () => {
    expect([figure(0.1234), figure(4.567), figure(45.67), figure(4567.8), figure(null)]).toEqual(["0.123", "4.57", "45.7", "4,568", "–"]);
  });
});

describe("the ref to compare with", () => {
  it("resolves to a commit, and a ref that names none is a clear error", () => {
    expect(resolveRef("HEAD")).toMatch(/^[0-9a-f]{40}$/);
    expect(() => resolveRef("no-such-branch-or-tag")).toThrow('--compare: "no-such-branch-or-tag" names no commit');
    expect(() => resolveRef("--all")).toThrow('--compare needs a git ref (branch, tag or commit), not "--all"');
  });
});

describe("--only", () => {
  it("runs every section without it, and the named ones (repeated or comma-separated) with it, in the benchmark's order", () => {
    expect([...selectSections(undefined)]).toEqual([...SECTIONS]);
    expect([...selectSections(["startup,round-trip", "memory"])]).toEqual(["round-trip", "memory", "startup"]);
  });

  it("names the sections there are when given one there is not", () => {
    expect(() => selectSections(["round-trip,roundtrip"])).toThrow('--only: no section "roundtrip"; the sections are round-trip, streaming,');
  });
});

describe("npm run bench's command line", () => {
  const bench = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "bench/main.ts", ...args], { cwd: new URL("../..", import.meta.url), encoding: "utf8", timeout: 60_000 });

  it("prints its usage with every section for --help, and exits 0 without measuring", () => {
    const help = bench("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: npm run bench --");
    for (const section of SECTIONS) expect(help.stdout).toContain(section);
  });

  it("says what was wrong and shows the usage, with no stack, for an unknown option or section (exit 2)", () => {
    for (const [args, said] of [
      [["--bogus"], "Unknown option '--bogus'"],
      [["--only", "nope"], 'no section "nope"'],
    ] as const) {
      const refused = bench(...args);
      expect(refused.status, args.join(" ")).toBe(2);
      expect(refused.stderr).toContain(said);
      expect(refused.stderr).toContain("usage: npm run bench --");
      expect(refused.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
