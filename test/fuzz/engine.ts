import fc from "fast-check";
import { startFuzzUpstream, type FuzzUpstream } from "./infra/fuzz-upstream.js";
import type { MemoryReading } from "./infra/gateway-process.js";
import type { FuzzSettings } from "./settings.js";
import type { FuzzTarget, RunningTarget, TargetContext } from "./target.js";

/**
 * Runs one target: starts it behind a recording upstream, checks a normal session works, takes a
 * memory baseline, runs the cases (fixed seed, then the random one), then checks the invariants
 * that hold for the whole run — the process is up, nothing invalid went upstream, memory came back
 * near the baseline, a normal session still works — and the target's own run properties.
 */

export interface FuzzReport {
  target: string;
  dialect: string;
  cases: number;
  requests: number;
  responses: number;
  errors: Map<string, number>;
  errorSamples: Map<string, string>;
  /** Problems found (a failing case counts each of its problems once; shrinking is not counted). */
  violations: number;
  /** Messages the gateway sent upstream, and how many of them were invalid. */
  upstreamMessages: number;
  upstreamViolations: number;
  baseline: MemoryReading | undefined;
  after: MemoryReading | undefined;
  durationMs: number;
  /** One entry per broken invariant, each with what is needed to reproduce it. */
  failures: string[];
}

/**
 * Live heap the gateway may keep after a run, above its baseline: generous, since sessions and
 * their event logs created by valid requests are real state, not leaks.
 */
const HEAP_ALLOWANCE_BYTES = 64 * 1024 * 1024;
const HEAP_ALLOWANCE_PER_SESSION = 64 * 1024;
/** How often a long run says how far it got. */
const PROGRESS_EVERY_MS = 30_000;

export class FuzzSession {
  private constructor(
    readonly target: FuzzTarget,
    readonly context: TargetContext,
    readonly running: RunningTarget,
  ) {}

  static async open(target: FuzzTarget, settings: FuzzSettings): Promise<FuzzSession> {
    const upstream = await startFuzzUpstream();
    try {
      const context = { upstream, settings };
      return new FuzzSession(target, context, await target.start(context));
    } catch (err) {
      await upstream.stop();
      throw err;
    }
  }

  get upstream(): FuzzUpstream {
    return this.context.upstream;
  }

  /** Runs `cases` cases (fixed seed, then random seed) and checks the whole-run invariants. */
  async fuzz(cases: number, log: (line: string) => void = () => undefined): Promise<FuzzReport> {
    const { running, target } = this;
    const { settings } = this.context;
    const started = Date.now();
    const failures: string[] = [];
    let violations = 0;

    try {
      await running.normalSession();
    } catch (err) {
      failures.push(`a normal session did not work before fuzzing started: ${(err as Error).message}`);
    }
    const baseline = failures.length ? undefined : await running.gateway.memory();
    const sessionsBefore = this.upstream.recorder.requests("session.create");

    const runs = settings.replayPath !== undefined ? [{ seed: settings.randomSeed, numRuns: 1 }] : splitRuns(settings, cases);
    for (const { seed, numRuns } of failures.length ? [] : runs) {
      let first: { value: unknown; problems: string[]; at: number } | undefined;
      const property = fc.asyncProperty(running.cases, async (value) => {
        // Shrinking re-runs cases against a live process (each may wait for its timeout): once its
        // budget is spent, the run is interrupted, which ends it with the smallest failure so far
        // (letting every further candidate pass would still walk through all of them).
        if (first && Date.now() - first.at > settings.shrinkBudgetMs) throw new fc.PreconditionFailure(true);
        const problems = await running.runCase(value).catch((err: unknown) => [`the case could not be run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`]);
        if (problems.length === 0) return;
        if (!first) {
          first = { value, problems, at: Date.now() };
          violations += problems.length;
        }
        throw new Error(problems.join("\n"));
      });
      log(`${target.name}: ${numRuns} cases, seed ${seed}`);
      const progress = setInterval(() => log(`${target.name}: ${running.stats.cases} cases so far (${(running.stats.cases / ((Date.now() - started) / 1000)).toFixed(0)}/s)`), PROGRESS_EVERY_MS);
      const details = await fc.check(property, { seed, numRuns, path: settings.replayPath, endOnFailure: settings.replayPath !== undefined }).finally(() => clearInterval(progress));
      if (details.failed) {
        failures.push(failureReport(target, running, settings, seed, details, first));
        break;
      }
    }

    await running.quiesce();
    await this.untilUpstreamQuiet();
    let after: MemoryReading | undefined;
    if (!running.gateway.alive()) {
      failures.push(`the gateway process is not running after the run (${JSON.stringify(await running.gateway.exited)}); stderr:\n${running.gateway.stderr()}`);
    } else {
      after = await running.gateway.memory();
      const sessions = this.upstream.recorder.requests("session.create") - sessionsBefore;
      const allowed = (baseline?.heapUsedBytes ?? 0) + HEAP_ALLOWANCE_BYTES + HEAP_ALLOWANCE_PER_SESSION * sessions;
      if (baseline && after.heapUsedBytes > allowed) {
        failures.push(`memory did not return near its baseline: live heap ${mb(after.heapUsedBytes)} after the run, ${mb(baseline.heapUsedBytes)} before (at most ${mb(allowed)} allowed for ${sessions} sessions created)`);
      }
      try {
        await running.normalSession();
      } catch (err) {
        failures.push(`a normal session does not work after fuzzing: ${(err as Error).message}`);
      }
      for (const property of target.properties ?? []) {
        const problems = await property.run(running, this.context).catch((err: unknown) => [`it could not be checked: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`]);
        violations += problems.length;
        if (problems.length) failures.push(`${target.name}: ${property.checks}, but:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
      }
    }
    const { tally } = this.upstream.recorder;
    if (tally.violationCount > 0) {
      violations += tally.violationCount;
      failures.push(`${tally.violationCount} invalid message(s) reached the upstream, e.g.:\n${tally.violations.join("\n")}`);
    }

    return {
      target: target.name,
      dialect: target.dialect,
      ...running.stats,
      violations,
      upstreamMessages: tally.messages,
      upstreamViolations: tally.violationCount,
      baseline,
      after,
      durationMs: Date.now() - started,
      failures,
    };
  }

  async close(): Promise<void> {
    try {
      await this.running.stop();
    } finally {
      await this.upstream.stop();
    }
  }

  /** Turns and interactions started by the cases finish on their own; memory is measured after. */
  private async untilUpstreamQuiet(quietMs = 300, maxMs = 10_000): Promise<void> {
    const deadline = Date.now() + maxMs;
    let last = this.upstream.recorder.tally.messages;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, quietMs));
      const now = this.upstream.recorder.tally.messages;
      if (now === last) return;
      last = now;
    }
  }
}

/** The fixed seed first (CI covers the same ground every time), then the random one. */
function splitRuns(settings: FuzzSettings, cases: number): Array<{ seed: number; numRuns: number }> {
  const fixed = Math.ceil(cases / 2);
  return [
    { seed: settings.fixedSeed, numRuns: fixed },
    { seed: settings.randomSeed, numRuns: cases - fixed },
  ].filter((run) => run.numRuns > 0);
}

function failureReport(target: FuzzTarget, running: RunningTarget, settings: FuzzSettings, seed: number, details: fc.RunDetails<[unknown]>, first: { value: unknown; problems: string[]; at: number } | undefined): string {
  const lines = [`${target.name}: a case broke an invariant (seed ${seed}, after ${details.numRuns} cases, ${details.numShrinks} shrinks).`];
  if (first) lines.push("First failing case:", running.describeCase(first.value), "Problems:", ...first.problems.map((p) => `  - ${p}`));
  if (details.counterexample) {
    lines.push("Smallest failing case found:", running.describeCase(details.counterexample[0]));
    if (details.errorInstance instanceof Error && details.errorInstance.message !== first?.problems.join("\n")) lines.push("Its problems:", details.errorInstance.message);
  }
  // The same mode: CI and long runs make values of different sizes from the same seed.
  const command = settings.mode === "ci" ? "npx vitest run test/fuzz" : "npm run fuzz";
  lines.push(
    `Reproduce: FUZZ_TARGETS="${target.name}" FUZZ_SEED=${seed} FUZZ_PATH="${details.counterexamplePath ?? ""}" ${command}`,
    `Gateway log (stderr):\n${running.gateway.stderr().slice(-4_000)}`,
  );
  return lines.join("\n");
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
