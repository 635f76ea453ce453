import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { BenchResults } from "../../bench/bench-results.js";
import { targetRows, targetsReport } from "../../bench/targets.js";

/** The targets summary of `npm run bench`: each row of issue 38 against its baseline of the same run (no benchmark is run here). */

const latest = JSON.parse(readFileSync(new URL("../../bench/results/latest.json", import.meta.url), "utf8")) as BenchResults;

const empty: BenchResults = { ...latest, roundTrip: [], streaming: [], translation: [], replicas: [], sendRound: [], validation: undefined, startup: undefined };

const row = (rows: ReturnType<typeof targetRows>, start: string) => {
  const found = rows.filter((r) => r.row.startsWith(start));
  expect(found, start).toHaveLength(1);
  return found[0]!;
};

describe("the targets summary", () => {
  it("lists every row of the issue's table, not measured (never met) when the run left its part out", () => {
    const rows = targetRows(empty);
    expect(rows).toHaveLength(13);
    expect(rows.every((r) => r.met === null && r.measured === null)).toBe(true);
    expect(targetsReport(rows)).toContain("Targets met: 0 of 0 measured (13 not measured in this run).");
  });

  it("takes the replica ratios against the single replica in memory, and the send round's CPU against the host's of the same rounds", () => {
    const results: BenchResults = {
      ...empty,
      replicas: [
        { ...latest.replicas![0]!, store: "memory", replicas: 1, gatewayCpuUsPerDelta: 1, deltasPerSecond: 1000 },
        { ...latest.replicas![0]!, store: "redis", replicas: 3, gatewayCpuUsPerDelta: 2.5, deltasPerSecond: 700 },
      ],
      sendRound: [
        { target: "direct", rounds: 200, roundsPerSecond: 1, p50Ms: 1, p99Ms: 2, gatewayCpuUsPerRound: null, hostCpuUsPerRound: 600 },
        { target: "gateway", rounds: 200, roundsPerSecond: 1, p50Ms: 1.5, p99Ms: 3, gatewayCpuUsPerRound: 500, hostCpuUsPerRound: 550 },
      ],
    };
    const rows = targetRows(results);
    expect(row(rows, "Ask, 30 subscribers, 3 replicas on one Redis: gateway CPU")).toMatchObject({ measured: 2.5, bound: 2, met: false });
    expect(row(rows, "Ask, 30 subscribers, 3 replicas on one Redis: deltas/s")).toMatchObject({ measured: 0.7, bound: 0.6, met: true });
    expect(row(rows, "Ask `session/send` → `turn.completed`: gateway CPU")).toMatchObject({ measured: 0.91, met: true });
    // At the bound counts as met.
    expect(row(rows, "Ask `session/send` → `turn.completed`: p50")).toMatchObject({ measured: 1.5, met: true });
    const report = targetsReport(rows);
    expect(report).toContain("| 2.50× | ≤ 2.00× | **missed** |");
    expect(report).toContain("Targets met: 3 of 4 measured (9 not measured in this run).");
  });

  it("reads the /tau rows against the Node.js relay, and validate and start-up as figures", () => {
    const rows = targetRows({ ...latest, validation: latest.validation && { ...latest.validation, linesPerSecond: 240_000 } });
    const rt1 = latest.roundTrip.find((r) => r.target === "gateway" && r.clients === 1)!;
    const node1 = latest.roundTrip.find((r) => r.target === "node" && r.clients === 1)!;
    expect(row(rows, "`/tau` relay, `session.list`, 1 client: relay CPU").measured).toBeCloseTo(rt1.relayCpuUsPerRequest! / node1.relayCpuUsPerRequest!, 2);
    expect(row(rows, "`tau-gateway validate`, ")).toMatchObject({ measured: 240_000, unit: "lines/s", met: false });
    expect(row(rows, "`serve` spawn")).toMatchObject({ measured: latest.startup!.readyMs, unit: "ms", bound: 250 });
  });
});
