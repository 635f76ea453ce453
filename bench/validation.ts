import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtCli, repoRoot } from "./processes.js";
import { parallelCeiling } from "./parallel-ceiling.js";
import { now, round } from "./stats.js";
import { writeTranscript } from "./transcript.js";

/**
 * `tau-gateway validate` on a generated transcript: lines per second of wall-clock time (the
 * whole command, so process start and loading the validators are included; a 10-line run gives that
 * fixed cost separately) and peak resident memory, from GNU time's "Maximum resident set size"
 * or, without it, from `process.resourceUsage().maxRSS` written at exit by a preloaded module.
 * Then the same number of lines as two files, checked with `--jobs 2` (a worker thread per file)
 * and, in the same run, with `--jobs 1`: how far the workers scale on this machine's cores; and
 * beside it how far two threads of plain CPU work scale then (parallel-ceiling.ts), the most
 * `--jobs 2` could get on the machine as it was.
 */

export interface ValidationBenchResult {
  lines: number;
  bytes: number;
  valid: number;
  invalid: number;
  seconds: number;
  linesPerSecond: number;
  /** Wall time of the same command on a 10-line file (start-up, loading the validators). */
  fixedCostMs: number;
  peakRssMiB: number;
  memoryMethod: string;
  /** Lines per second of the command's CPU time (user + system, GNU time): steadier than wall time on a busy machine. */
  cpuLinesPerSecond?: number;
  /** The same lines as two files: lines/s with --jobs 2 and with --jobs 1, in the same run. */
  jobs?: { files: number; linesPerSecondJobs2: number; linesPerSecondJobs1: number; parallelCeiling?: number };
}

interface Run {
  ms: number;
  stdout: string;
  peakKiB: number;
  /** User + system CPU of the command (GNU time), NaN without it. */
  cpuMs: number;
}

const GNU_TIME = "/usr/bin/time";

export async function measureValidation(lines: number): Promise<ValidationBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "tau-bench-validate-"));
  try {
    const big = join(dir, "transcript.jsonl");
    const small = join(dir, "small.jsonl");
    const bytes = await writeTranscript(big, lines);
    await writeTranscript(small, 10);
    const useGnuTime = existsSync(GNU_TIME) && (await runValidate([GNU_TIME, "-v"], small, dir).then((r) => Number.isFinite(r.peakKiB), () => false));
    const prefix = useGnuTime ? [GNU_TIME, "-v"] : [];
    await runValidate(prefix, small, dir); // warm the file cache and the compiled-code cache
    const fixed = await runValidate(prefix, small, dir);
    const full = await runValidate(prefix, big, dir);
    const halves = [join(dir, "half-1.jsonl"), join(dir, "half-2.jsonl")];
    for (const half of halves) await writeTranscript(half, Math.ceil(lines / 2));
    // A build from before --jobs refuses it (exit 2): that row is left out for it.
    const jobs2 = await runValidate(prefix, halves, dir, ["--jobs", "2"]).catch(() => undefined);
    const jobs1 = jobs2 && (await runValidate(prefix, halves, dir, ["--jobs", "1"]));
    const halvesLines = 2 * Math.ceil(lines / 2);
    // Right after the two runs: how far two threads could scale on the machine as it then was.
    const ceiling = jobs2 && jobs1 ? await parallelCeiling() : undefined;
    const summary = /(\d+) valid, (\d+) invalid/.exec(full.stdout);
    return {
      lines,
      bytes,
      valid: summary ? Number(summary[1]) : Number.NaN,
      invalid: summary ? Number(summary[2]) : Number.NaN,
      seconds: round(full.ms / 1000, 2),
      linesPerSecond: round(lines / (full.ms / 1000), 0),
      fixedCostMs: round(fixed.ms, 0),
      peakRssMiB: round(full.peakKiB / 1024, 1),
      memoryMethod: useGnuTime ? "GNU time -v (Maximum resident set size)" : "process.resourceUsage().maxRSS at exit (--import preload)",
      cpuLinesPerSecond: Number.isFinite(full.cpuMs) ? round(lines / (full.cpuMs / 1000), 0) : undefined,
      jobs: jobs2 && jobs1 ? { files: 2, linesPerSecondJobs2: round(halvesLines / (jobs2.ms / 1000), 0), linesPerSecondJobs1: round(halvesLines / (jobs1.ms / 1000), 0), parallelCeiling: ceiling } : undefined,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runValidate(prefix: string[], file: string | string[], dir: string, options: string[] = []): Promise<Run> {
  const files = typeof file === "string" ? [file] : file;
  const preload = join(dir, "max-rss.mjs");
  if (!prefix.length && !existsSync(preload)) {
    writeFileSync(preload, 'process.on("exit", () => process.stderr.write(`maxrss_kib=${process.resourceUsage().maxRSS}\\n`));\n');
  }
  const nodeArgs = prefix.length ? [builtCli, "validate", ...options, ...files] : ["--import", preload, builtCli, "validate", ...options, ...files];
  const [command, ...args] = [...prefix, process.execPath, ...nodeArgs];
  return new Promise((resolve, reject) => {
    const started = now();
    const child = spawn(command!, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.once("error", reject);
    child.once("close", (code) => {
      const ms = now() - started;
      if (code !== 0 && code !== 1) return reject(new Error(`validate exited ${code}: ${stderr.slice(-500)}`));
      const gnu = /Maximum resident set size \(kbytes\):\s*(\d+)/.exec(stderr);
      const preloaded = /maxrss_kib=(\d+)/.exec(stderr);
      const user = /User time \(seconds\):\s*([\d.]+)/.exec(stderr);
      const system = /System time \(seconds\):\s*([\d.]+)/.exec(stderr);
      const cpuMs = user && system ? (Number(user[1]) + Number(system[1])) * 1000 : Number.NaN;
      resolve({ ms, stdout, peakKiB: Number(gnu?.[1] ?? preloaded?.[1] ?? Number.NaN), cpuMs });
    });
  });
}
