import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof`) and sums self time per function and per area
 * (a package under node_modules, a folder of this project, Node's internals, the VM itself).
 * Usage: tsx bench/profile-summary.ts FILE.cpuprofile [TOP] [FROM_FUNCTION]
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  name: string;
  ms: number;
  /** Share of the busy time (everything except idle). */
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  busyMs: number;
  functions: SelfTime[];
  areas: SelfTime[];
  /** This project's functions by total time (self and everything they call). */
  ownInclusive: SelfTime[];
}

/**
 * `from`: count only the samples from the first one whose stack holds a function of that name on
 * (`sendOnce`, say: the rounds of a workload without the process's start-up before them).
 */
export function summarizeProfile(path: string, top = 25, from?: string): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const holds = (id: number) => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (byId.get(at)!.callFrame.functionName === from) return true;
    return false;
  };
  const first = from === undefined ? 0 : profile.samples.findIndex(holds);
  if (first < 0) throw new Error(`${path}: no sample in a function named ${from}`);
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; attribute it to the sample's node.
  for (let i = first; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, profile.timeDeltas[i] ?? 0));
  }
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    totalUs += us;
    if (frame.functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    const key = `${frame.functionName || "(anonymous)"} ${location(frame.url, frame.lineNumber)}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + us);
    const area = areaOf(frame.url, frame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  // Inclusive time of our own functions: each sample counts once for every distinct one on its stack.
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!/\/(dist\/)?src\//.test(frame.url) || frame.url.includes("node_modules")) continue;
      const key = `${frame.functionName || "(anonymous)"} ${location(frame.url, frame.lineNumber)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const rank = (map: Map<string, number>, limit: number): SelfTime[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, us]) => ({ name, ms: Math.round(us / 100) / 10, percent: Math.round((1000 * us) / Math.max(1, busyUs)) / 10 }));
  return { totalMs: Math.round(totalUs / 1000), idleMs: Math.round(idleUs / 1000), busyMs: Math.round(busyUs / 1000), functions: rank(functions, top), areas: rank(areas, 15), ownInclusive: rank(inclusive, Math.max(15, top)) };
}

function location(url: string, line: number): string {
  if (!url) return "";
  const short = url
    .replace(/^file:\/\//, "")
    .replace(/^.*\/node_modules\//, "")
    .replace(/^.*\/dist\//, "")
    .replace(/^node:/, "node:");
  return `${short}:${line + 1}`;
}

function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native / VM builtins)";
  if (url.startsWith("node:")) return "node internals";
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/dist\/((?:src\/)?[^/]+)\//.exec(url) ?? /\/(src\/[^/]+)\//.exec(url);
  if (own) return own[1]!;
  return url.replace(/^file:\/\//, "");
}

export function formatSummary(title: string, summary: ProfileSummary): string {
  const lines = [
    `### ${title}`,
    "",
    `Sampled ${summary.totalMs} ms, busy ${summary.busyMs} ms (idle ${summary.idleMs} ms). Self time, share of busy time:`,
    "",
    "| Area | ms | % |",
    "| --- | ---: | ---: |",
    ...summary.areas.map((a) => `| ${a.name} | ${a.ms} | ${a.percent} |`),
    "",
    "| Function (file:line) | ms | % |",
    "| --- | ---: | ---: |",
    ...summary.functions.map((f) => `| \`${f.name.replace(/\|/g, "\\|")}\` | ${f.ms} | ${f.percent} |`),
    "",
    "| Project function, total time incl. callees | ms | % |",
    "| --- | ---: | ---: |",
    ...summary.ownInclusive.map((f) => `| \`${f.name.replace(/\|/g, "\\|")}\` | ${f.ms} | ${f.percent} |`),
    "",
  ];
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, top, from] = process.argv.slice(2);
  if (!file) {
    process.stderr.write("usage: tsx bench/profile-summary.ts FILE.cpuprofile [TOP] [FROM_FUNCTION]\n");
    process.exit(2);
  }
  process.stdout.write(formatSummary(file, summarizeProfile(file, top ? Number(top) : 25, from)));
}
