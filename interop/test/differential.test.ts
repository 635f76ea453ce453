import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runDifferential, type DifferentialResult } from "./support/differential/harness.js";
import { TAU_GATEWAY_BUNDLE } from "./support/differential/codex-targets.js";
import { ACP_SCENARIOS } from "./support/differential/acp-scenarios.js";
import { CODEX_SCENARIOS } from "./support/differential/codex-scenarios.js";
import { count, details, table } from "./support/differential/report.js";

/**
 * The differential conformance harness (test/support/differential): the same scenarios played on
 * the real Codex app-server of every installed release (on a loopback mock of the Responses API)
 * and on tau-gateway app-server, and through codex-acp and tau-gateway acp; every difference a
 * client could see is either gone or explained in differences.json. Needs the bundled command
 * line (npm run build:cli in the checkout), as a client runs it.
 */

describe.skipIf(!existsSync(TAU_GATEWAY_BUNDLE))("tau-gateway against the real servers", () => {
  let result: DifferentialResult;

  it("plays every scenario on every reference, with no difference left unexplained", async () => {
    result = await runDifferential();
    console.log(`${table(result.reports)}\n`);
    const open = details(result.reports);
    if (open) console.log(open);
    expect(CODEX_SCENARIOS.length).toBeGreaterThanOrEqual(40);
    expect(ACP_SCENARIOS.length).toBeGreaterThanOrEqual(15);
    expect(result.reports.map((r) => r.reference)).toContain("codex 0.169.0");
    expect(result.reports.map((r) => r.reference)).toContain("codex-acp");
    const unexplained = result.reports.flatMap((r) => r.verdicts.filter((v) => v.verdict === "unexplained").map((v) => `${r.reference} · ${v.scenario}: ${v.differences.filter((d) => !d.explanation).map((d) => d.line).join("; ")}`));
    expect(unexplained).toEqual([]);
    for (const report of result.reports) expect(count(report, "identical") + count(report, "explained") + count(report, "pending")).toBe(report.verdicts.length);
  }, 600_000);

  it("has no explanation left over for a difference that is gone", () => {
    expect(result, "the first test ran").toBeDefined();
    expect(result.stale.map((e) => `${e.reference}: ${e.difference}`)).toEqual([]);
  });
});
