import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildCheckout, cliOf } from "./build.js";
import { figuresOf } from "./compare-figures.js";
import { alternationSchedule, type Build } from "./compare-plan.js";
import { comparisonReport } from "./compare-report.js";
import { compareRounds, type RoundFigures } from "./compare-stats.js";
import { busyMachineNote, machineInfo, wasBusy } from "./machine.js";
import { repoRoot } from "./processes.js";
import type { BenchResults } from "./bench-results.js";
import { UsageError } from "./usage-error.js";

/**
 * `npm run bench -- --compare <ref>`: the working tree's build against the build of a git ref, in
 * one series on this machine. The ref is checked out into a temporary git worktree (removed again
 * however the run ends), installed with `npm ci` and built; then each round runs the whole
 * benchmark once per build, alternating their order (compare-plan.ts), each run a process of its
 * own (`bench/main.ts --no-build --json-out …` with TAU_BENCH_CLI naming the build). The
 * benchmark's own code, from the working tree, measures both builds.
 */

export interface CompareOptions {
  ref: string;
  rounds: number;
  quick: boolean;
  /** --only sections, passed on to every run; undefined: all. */
  only: readonly string[] | undefined;
  /** false with --no-build: measure the working tree's existing dist/. */
  build: boolean;
  log: (line: string) => void;
}

/** Everything a comparison measured (written as JSON beside the single runs' results). */
export interface ComparisonResults {
  startedAt: string;
  old: { ref: string; commit: string };
  new: { commit: string; uncommittedChanges: boolean };
  schedule: Build[];
  /** Runs that failed, with why; their figures are missing from the comparison. */
  failedRuns: string[];
  quick: boolean;
  only: readonly string[] | undefined;
  runs: Array<{ build: Build; results: BenchResults }>;
}

function git(args: string[]): { ok: boolean; out: string; err: string } {
  const result = spawnSync("git", args, { cwd: repoRoot, encoding: "utf8" });
  return { ok: result.status === 0, out: (result.stdout ?? "").trim(), err: (result.stderr ?? "").trim() };
}

/** The commit a ref names, or a clear error when it names none. */
export function resolveRef(ref: string): string {
  if (ref.startsWith("-")) throw new UsageError(`--compare needs a git ref (branch, tag or commit), not "${ref}"`);
  const found = git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`]);
  if (!found.ok || !found.out) throw new UsageError(`--compare: "${ref}" names no commit in ${resolve(repoRoot)} (try a branch, a tag or a commit hash; \`git log --oneline\` lists commits)`);
  return found.out;
}

/** A temporary worktree of `commit`; `remove` deletes it and its registration, and may be called more than once. */
function checkOut(commit: string, log: (line: string) => void): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `tau-gateway-bench-${commit.slice(0, 10)}-`));
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    log(`removing the temporary worktree ${dir}`);
    const result = git(["worktree", "remove", "--force", dir]);
    rmSync(dir, { recursive: true, force: true });
    if (!result.ok) git(["worktree", "prune"]);
  };
  const added = git(["worktree", "add", "--detach", dir, commit]);
  if (!added.ok) {
    remove();
    throw new Error(`git worktree add ${dir} ${commit} failed: ${added.err}`);
  }
  return { dir, remove };
}

function install(dir: string, log: (line: string) => void): void {
  log(`installing the old build's dependencies (npm ci in ${dir})`);
  const result = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, stdio: ["ignore", process.stderr, "inherit"] });
  if (result.status !== 0) throw new Error(`npm ci in ${dir} failed (exit ${result.status ?? result.signal})`);
}

/** One benchmark of one build, as a process of its own; its results as written to `out`. */
function runBench(cli: string, options: CompareOptions, out: string): Promise<BenchResults> {
  const passed = [...(options.quick ? ["--quick"] : []), ...(options.only ? ["--only", options.only.join(",")] : [])];
  const args = ["--import", "tsx", join(repoRoot, "bench", "main.ts"), "--no-build", "--json-out", out, ...passed];
  // stdout (the single run's tables) is dropped: the comparison prints its own; progress goes to stderr.
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, TAU_BENCH_CLI: cli }, stdio: ["ignore", "ignore", "inherit"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (code !== 0) return reject(new Error(`the benchmark of ${cli} failed (exit ${code ?? signal}); its output is above`));
      resolve(JSON.parse(readFileSync(out, "utf8")) as BenchResults);
    });
  });
}

export async function compareWithRef(options: CompareOptions): Promise<void> {
  const { log } = options;
  if (process.env.TAU_BENCH_CLI) throw new UsageError("--compare measures the working tree's build against the ref's: unset TAU_BENCH_CLI");
  const began = new Date();
  const schedule = alternationSchedule(options.rounds);
  const oldCommit = resolveRef(options.ref);
  const newCommit = git(["rev-parse", "HEAD"]).out;
  const uncommittedChanges = git(["status", "--porcelain", "--untracked-files=no"]).out !== "";
  const names: Record<Build, string> = {
    old: `${options.ref} (${oldCommit.slice(0, 10)})`,
    new: `working tree (${newCommit.slice(0, 10)}${uncommittedChanges ? " + uncommitted changes" : ""})`,
  };
  log(`comparing ${names.new} with ${names.old}: ${schedule.length} runs of the benchmark${options.quick ? " (--quick)" : ""}${options.only ? ` (--only ${options.only.join(",")})` : ""}, in this order: ${schedule.join(", ")}`);

  const worktree = checkOut(oldCommit, log);
  // Ctrl-C or a kill still removes the worktree (the benchmark runs get the same signal from the terminal).
  const onSignal = (signal: NodeJS.Signals) => {
    worktree.remove();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const scratch = mkdtempSync(join(tmpdir(), "tau-gateway-bench-compare-"));
  try {
    const notes: Record<Build, string[]> = { old: [], new: [] };
    if (options.build) {
      const note = buildCheckout(repoRoot, log);
      if (note) notes.new.push(note);
    }
    install(worktree.dir, log);
    const oldNote = buildCheckout(worktree.dir, log);
    if (oldNote) notes.old.push(oldNote);
    const cli: Record<Build, string> = { old: cliOf(worktree.dir), new: cliOf(repoRoot) };
    for (const build of ["old", "new"] as const) if (!existsSync(cli[build])) throw new Error(`the ${build} build has no command line at ${cli[build]}`);

    const runs: ComparisonResults["runs"] = [];
    const failedRuns: string[] = [];
    for (const [index, build] of schedule.entries()) {
      const run = `run ${index + 1} of ${schedule.length} (${build} build)`;
      log(`${run}: ${names[build]}`);
      try {
        const results = await runBench(cli[build], options, join(scratch, `${index}-${build}.json`));
        runs.push({ build, results });
        // The load at each run's start is in the report's machine line instead.
        notes[build].push(...results.notes.filter((note) => note !== busyMachineNote(results.machine)));
      } catch (err) {
        // One failed run (a busy machine timing out a start-up, say) costs its figures, not the series.
        const reason = err instanceof Error ? err.message : String(err);
        log(`${run} failed, going on without it: ${reason}`);
        failedRuns.push(`${run}: ${reason}`);
      }
    }
    for (const build of ["old", "new"] as const) if (!runs.some((run) => run.build === build)) throw new Error(`every run of the ${build} build failed; their output is above`);

    const rounds: RoundFigures[] = runs.map((run) => ({ build: run.build, figures: figuresOf(run.results) }));
    const m = machineInfo();
    const loads = runs.map((run) => run.results.machine.loadAverage[0]).join(", ");
    const busy = runs.filter((run) => wasBusy(run.results.machine)).length;
    const machine = [
      `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, ${m.kernel}; 1-minute load average at the start of each run: ${loads}. Started ${began.toISOString()}, ${Math.round((Date.now() - began.getTime()) / 1000)} s in all.`,
      ...(busy ? [`**The machine was busy** (load above half its cores) at the start of ${busy} of ${runs.length} runs: rates and latencies scatter widely then, CPU per request or message less.`] : []),
    ].join(" ");
    process.stdout.write(`${comparisonReport({ old: names.old, new: names.new, schedule, failedRuns, quick: options.quick, only: options.only, notes, machine }, compareRounds(rounds))}\n`);

    const record: ComparisonResults = { startedAt: began.toISOString(), old: { ref: options.ref, commit: oldCommit }, new: { commit: newCommit, uncommittedChanges }, schedule, failedRuns, quick: options.quick, only: options.only, runs };
    const name = `compare-${began.toISOString().replace(/[:.]/g, "-")}.json`;
    // Like single runs: --quick and --only results are not for reporting and stay out of bench/results/.
    const dir = options.quick || options.only ? tmpdir() : join(repoRoot, "bench", "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), `${JSON.stringify(record, null, 2)}\n`);
    log(`every run's results written to ${join(dir, name)}`);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    rmSync(scratch, { recursive: true, force: true });
    worktree.remove();
  }
}
