import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * CPU time a process (and its children, e.g. nginx's worker under its master) has used, from
 * /proc/PID/stat. Throughput on a shared two-core box moves with whatever else runs; the CPU a
 * relay spends per message does much less, so the reports give both.
 */

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
    const value = Number(out.stdout?.trim());
    ticksPerSecond = Number.isFinite(value) && value > 0 ? value : 100;
  }
  return ticksPerSecond;
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function ownCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start at field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU milliseconds of `pids` and all their descendants; NaN without /proc. */
export function cpuMs(pids: readonly number[]): number {
  let total = 0;
  const seen = new Set<number>();
  const visit = (pid: number) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    total += ownCpuMs(pid);
    for (const child of children(pid)) visit(child);
  };
  for (const pid of pids) visit(pid);
  return total;
}

/** CPU microseconds per item used by `pids` between two readings (to `decimals` places); null when not measurable. */
export function cpuPerItemUs(before: number, after: number, items: number, decimals = 1): number | null {
  if (!Number.isFinite(before) || !Number.isFinite(after) || items <= 0) return null;
  const scale = 10 ** decimals;
  return Math.round(((after - before) * 1000 * scale) / items) / scale;
}
