import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The processes a benchmark runs against: each is its own OS process (so client load, gateway
 * work and host work do not share an event loop), started from the built CLI, watched on stderr
 * for its "listening" line, and stopped with SIGTERM (the CLI's clean shutdown, which is also when
 * `--cpu-prof` writes its profile).
 */

export const repoRoot = fileURLToPath(new URL("..", import.meta.url));
/**
 * The built command as users run it (the bundle `bin` names); TAU_BENCH_CLI points the benchmarks at
 * another build (to compare two), or at dist/src/cli/main.js, the same code one module per file.
 */
export const builtCli = process.env.TAU_BENCH_CLI || fileURLToPath(new URL("../dist/tau-gateway.mjs", import.meta.url));

export interface Started {
  readonly label: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Regex groups of the line that announced the listener. */
  readonly match: RegExpExecArray;
  /** Milliseconds from spawn to that line. */
  readonly startMs: number;
  /** Last lines written to stderr (for error reports). */
  stderrTail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Matched against each stderr (or stdout) line; resolves once it appears. */
  ready: RegExp;
  timeoutMs?: number;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeFlags?: string[];
  /** The command line to run instead of `builtCli` (another build's, to measure two side by side). */
  cli?: string;
}

/** Starts `node dist/tau-gateway.mjs …` (or TAU_BENCH_CLI) and waits for its ready line. */
export function startProcess(label: string, options: SpawnOptions): Promise<Started> {
  const args = [...(options.nodeFlags ?? []), options.cli ?? builtCli, ...options.args];
  const began = performance.now();
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
  const tail: string[] = [];
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const gone = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exited = { code, signal };
      resolve();
    }),
  );

  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`${label}: not listening within ${options.timeoutMs ?? 15_000} ms\n${tail.join("\n")}`)), options.timeoutMs ?? 15_000);
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(err);
    };
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (settled) return;
      const match = options.ready.exec(line);
      if (!match) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        label,
        child,
        pid: child.pid!,
        match,
        startMs: performance.now() - began,
        stderrTail: () => tail.join("\n"),
        stop: async (graceMs = 5_000) => {
          if (exited) return;
          child.kill("SIGTERM");
          const killer = setTimeout(() => child.kill("SIGKILL"), graceMs);
          await gone;
          clearTimeout(killer);
        },
      });
    };
    // Both streams are always drained: a full pipe would block the child.
    lines(child.stderr!, onLine);
    lines(child.stdout!, onLine);
    child.once("error", (err) => fail(new Error(`${label}: ${err.message}`)));
    child.once("exit", (code, signal) => fail(new Error(`${label} exited (${code ?? signal}) before listening\n${tail.join("\n")}`)));
  });
}

function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffered = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffered += chunk;
    let at: number;
    while ((at = buffered.indexOf("\n")) !== -1) {
      onLine(buffered.slice(0, at));
      buffered = buffered.slice(at + 1);
    }
  });
}

/** Resident set size of a process in KiB (`VmRSS` of /proc/PID/status); NaN where /proc is missing. */
export function residentKiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}
