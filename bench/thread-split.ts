import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startNodeRelay } from "./node-relay.js";
import { measureRoundTrip, type Target } from "./round-trip.js";
import { gatewayAuth, startGateway, startHost } from "./stack.js";
import { streamTurn } from "./streaming.js";

/**
 * Where a relay's CPU goes, thread by thread, which V8's own profiler (bench/profile.ts) cannot
 * say: it samples the main thread only, and counts time spent waiting for a core inside a system
 * call as that call's. `perf record` (CPU-clock samples of every thread) of the no-op Node.js relay
 * and the gateway on the `/tau` workloads, the same process measured `--windows` times in a row, so
 * what a fresh process pays once (V8 compiling the hot path, the first major collection) shows
 * apart from the steady state. Needs `perf` on the PATH and the right to record the processes.
 *
 *   tsx bench/thread-split.ts [--row rt1|rt32|stream] [--windows N]
 */

const { values: flags } = parseArgs({
  options: { row: { type: "string", default: "rt32" }, windows: { type: "string", default: "3" } },
  strict: true,
});

const HZ = 1999;
/** JIT code named in perf's samples (/tmp/perf-PID.map). */
const NODE_FLAGS = ["--perf-basic-prof-only-functions", "--interpreted-frames-native-stack"];

type Category = "main: JS" | "main: native" | "main: kernel" | "GC" | "V8 compiler threads" | "other threads";

/** Records `pid` until the returned function is called. */
function record(pid: number, file: string): () => Promise<void> {
  const child = spawn("perf", ["record", "-e", "cpu-clock", "-F", String(HZ), "-g", "-o", file, "-p", String(pid)], { stdio: "ignore" });
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return async () => {
    child.kill("SIGINT");
    await gone;
  };
}

/** The category of one sample: its thread, then its innermost frame (GC anywhere on the stack). */
function categorize(mainThread: boolean, frames: string[]): Category {
  const stack = frames.join("\n");
  const gc = /Scaveng|MarkCompact|Marking|Sweeper|GCTracer|Heap::Collect/.test(stack);
  if (!mainThread) return gc ? "GC" : /compiler::|Compil/.test(stack) ? "V8 compiler threads" : "other threads";
  if (gc) return "GC";
  const top = frames[0] ?? "";
  if (top.includes("[kernel")) return "main: kernel";
  return /JS:|Builtins_|\[JIT\]|perf-\d+\.map/.test(top) ? "main: JS" : "main: native";
}

/** Microseconds per item by category, from `perf script` of one recording. */
function split(file: string, items: number): Map<Category, number> {
  const out = spawnSync("perf", ["script", "-i", file, "-F", "pid,tid,ip,sym,dso"], { encoding: "utf8", maxBuffer: 1 << 30 }).stdout ?? "";
  const perItem = new Map<Category, number>();
  for (const block of out.split(/\n\s*\n/)) {
    const [head, ...frames] = block.split("\n").filter((line) => line.trim() !== "");
    const ids = /^\s*(\d+)\/(\d+)/.exec(head ?? "");
    if (!ids) continue;
    const category = categorize(ids[1] === ids[2], frames);
    perItem.set(category, (perItem.get(category) ?? 0) + 1e6 / HZ / items);
  }
  return perItem;
}

async function window(target: Target, file: string): Promise<number> {
  const pid = target.relayPids![0]!;
  if (flags.row === "stream") {
    await streamTurn(target, 1000);
    const stop = record(pid, file);
    let messages = 0;
    for (let i = 0; i < 5; i++) messages += (await streamTurn(target, 10_000)).messages;
    await stop();
    return messages;
  }
  // Recorded over the measured window only, as the bench reads CPU.
  let stop: (() => Promise<void>) | undefined;
  const timer = setTimeout(() => (stop = record(pid, file)), 500);
  const result = await measureRoundTrip(target, flags.row === "rt1" ? 1 : 32, { warmupMs: 500, durationMs: 3000 });
  clearTimeout(timer);
  await stop?.();
  return result.requests + result.errors;
}

async function main(): Promise<void> {
  if (!["rt1", "rt32", "stream"].includes(flags.row!)) throw new Error(`--row is rt1, rt32 or stream, not ${flags.row}`);
  const windows = Number(flags.windows);
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-threads-"));
  const auth = gatewayAuth();
  const host = await startHost();
  const stops: Array<() => Promise<void>> = [() => host.stop()];
  try {
    const node = await startNodeRelay(host.match[1]!, NODE_FLAGS);
    stops.unshift(() => node.stop());
    const gateway = await startGateway({ upstream: host.match[1]!, auth, nodeFlags: NODE_FLAGS });
    stops.unshift(() => gateway.process.stop());
    const targets: Target[] = [
      { name: "Node.js relay", url: node.url, relayPids: [node.pid] },
      { name: "gateway", url: gateway.access.tau, headers: gateway.access.headers, relayPids: [gateway.process.pid] },
    ];
    const categories: Category[] = ["main: JS", "main: native", "main: kernel", "GC", "V8 compiler threads", "other threads"];
    process.stdout.write(`| ${flags.row}, window | relay | items | total µs | ${categories.join(" | ")} |\n| --- | --- | ---: | ---: |${" ---: |".repeat(categories.length)}\n`);
    for (const target of targets) {
      for (let w = 1; w <= windows; w++) {
        const file = join(dir, `${target.name.replace(/\W+/g, "-")}-${w}.data`);
        const items = await window(target, file);
        const perItem = split(file, items);
        const total = [...perItem.values()].reduce((a, b) => a + b, 0);
        process.stdout.write(`| ${w} | ${target.name} | ${items} | ${total.toFixed(1)} | ${categories.map((c) => (perItem.get(c) ?? 0).toFixed(1)).join(" | ")} |\n`);
      }
    }
    process.stderr.write(`recordings in ${dir}\n`);
  } finally {
    for (const stop of stops) await stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`thread-split: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
