import { runDifferential } from "./harness.js";
import { details, table } from "./report.js";

/**
 * The differential report on its own: `npm run differential` in interop/ (after `npm run
 * build:cli` in the checkout) prints the table and every difference not explained by
 * differences.json; `--all` prints every difference with its explanation. Exits 1 when a
 * difference is unexplained or an explanation is stale.
 */

const all = process.argv.includes("--all");
const { reports, stale } = await runDifferential({ log: (line) => console.error(line) });
if (all) {
  for (const report of reports)
    for (const verdict of report.verdicts) {
      console.log(`${report.reference} · ${verdict.scenario} · ${verdict.verdict}`);
      for (const d of verdict.differences) console.log(`  ${d.explanation ? (d.explanation.pending ? "[pending] " : "[explained] ") : "[UNEXPLAINED] "}${d.line}`);
    }
} else {
  const open = details(reports);
  if (open) console.log(open);
}
for (const entry of stale) console.log(`stale explanation (${entry.reference}): ${entry.difference}`);
console.log(table(reports));
process.exitCode = reports.some((r) => r.verdicts.some((v) => v.verdict === "unexplained")) || stale.length ? 1 : 0;
