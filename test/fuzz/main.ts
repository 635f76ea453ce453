import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FuzzSession, type FuzzReport } from "./engine.js";
import { casesPerTarget, fuzzSettings } from "./settings.js";
import { summaryTable } from "./summary.js";
import { loadTargets } from "./targets.js";

/**
 * `npm run fuzz`: the long run. Every dialect (or the targets named in FUZZ_TARGETS) gets FUZZ_CASES
 * cases (default 100,000; also `npm run fuzz -- 20000`), shared by its transports, with bigger
 * hostile values and floods than in CI. Prints a summary table; exits 1 if any invariant broke.
 */

const cases = process.argv[2];
if (cases !== undefined && !/^\d+$/.test(cases)) {
  process.stderr.write("usage: npm run fuzz [-- CASES_PER_DIALECT]   (environment: FUZZ_CASES, FUZZ_SEED, FUZZ_PATH, FUZZ_TARGETS)\n");
  process.exit(2);
}
// Login shells the embedded host runs read the profile of HOME: an empty one, as in the tests.
process.env.HOME = mkdtempSync(join(tmpdir(), "tau-gateway-fuzz-home-"));
const settings = fuzzSettings("long", { ...process.env, ...(cases ? { FUZZ_CASES: cases } : {}) });
const targets = await loadTargets(settings.targets);
const say = (line: string) => process.stderr.write(`${line}\n`);
say(`fuzzing ${targets.map((t) => `${t.name} (${casesPerTarget(settings, targets, t)} cases)`).join(", ")}; seeds ${settings.fixedSeed} (fixed) and ${settings.randomSeed} (FUZZ_SEED to repeat)`);

const reports: FuzzReport[] = [];
for (const target of targets) {
  const session = await FuzzSession.open(target, settings);
  try {
    const report = await session.fuzz(casesPerTarget(settings, targets, target), say);
    reports.push(report);
    say(summaryTable([report]));
    for (const failure of report.failures) say(`\nFAILED ${failure}\n`);
  } finally {
    await session.close();
  }
}

process.stdout.write(`\n${summaryTable(reports)}\n`);
const samples = reports.flatMap((r) => [...r.errorSamples].map(([code, text]) => `  ${r.target} ${code}: ${text}`));
if (samples.length) process.stdout.write(`\nFirst error answer of each code:\n${samples.join("\n")}\n`);
const failed = reports.filter((r) => r.failures.length > 0);
process.stdout.write(`\n${failed.length ? `invariants broken on: ${failed.map((r) => r.target).join(", ")}` : "no invariant broken"} (random seed ${settings.randomSeed})\n`);
process.exitCode = failed.length ? 1 : 0;
