/**
 * How much fuzzing to do. The CI run (`npm test`) is bounded: a few seconds per target, so the
 * whole fuzz suite adds well under a minute on two cores; `npm run fuzz` runs long with bigger
 * hostile values. Environment:
 *
 *   FUZZ_CASES=N          cases per dialect, shared by its transports (each transport's share is
 *                         split between the fixed and the random seed); without it, CI runs
 *                         CI_CASES_PER_TARGET per target and `npm run fuzz` 100,000 per dialect
 *   FUZZ_SEED=N           replaces the random seed (the fixed seed still runs first)
 *   FUZZ_PATH=P           with FUZZ_SEED: replays one counterexample (fast-check's path)
 *   FUZZ_TARGETS=a,b      only transports whose file name or display name contains one of these
 */

export interface FuzzSizes {
  /** Longest "huge" string, in UTF-16 units. */
  hugeString: number;
  /** Deepest nesting of arrays/objects in a message. */
  deepNesting: number;
  /** Longest array / most keys of one object. */
  hugeCollection: number;
  /** Requests a flood pipelines at once. */
  floodMessages: number;
}

export interface FuzzSettings {
  mode: "ci" | "long";
  /** Cases per dialect, each of its transports getting an equal share; undefined: CI_CASES_PER_TARGET per target. */
  casesPerDialect: number | undefined;
  /** The seed every run starts with, so CI always covers the same ground first. */
  fixedSeed: number;
  /** The second run's seed: FUZZ_SEED or a fresh one (printed with any failure). */
  randomSeed: number;
  replayPath: string | undefined;
  targets: string[] | undefined;
  sizes: FuzzSizes;
  /** How long one case may wait for the answers it is owed. */
  answerTimeoutMs: number;
  /** How long fast-check may spend shrinking a failing case. */
  shrinkBudgetMs: number;
}

export const FIXED_SEED = 0x7a06;

/** Cases per target in CI: a few seconds each on two busy cores. */
export const CI_CASES_PER_TARGET = 40;

/** The gateway's default message limit (WebSocket message, HTTP body), which the fuzzed gateways keep. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

const CI_SIZES: FuzzSizes = { hugeString: 256 * 1024, deepNesting: 20_000, hugeCollection: 5_000, floodMessages: 2_000 };
const LONG_SIZES: FuzzSizes = { hugeString: 4 * 1024 * 1024, deepNesting: 200_000, hugeCollection: 100_000, floodMessages: 51_000 };

export function fuzzSettings(mode: "ci" | "long", env: NodeJS.ProcessEnv = process.env): FuzzSettings {
  const number = (name: string): number | undefined => {
    const text = env[name];
    if (text === undefined || text === "") return undefined;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer (got ${JSON.stringify(text)})`);
    return value;
  };
  const list = (name: string) => env[name]?.split(",").map((s) => s.trim()).filter(Boolean);
  return {
    mode,
    casesPerDialect: number("FUZZ_CASES") ?? (mode === "ci" ? undefined : 100_000),
    fixedSeed: FIXED_SEED,
    randomSeed: number("FUZZ_SEED") ?? (Date.now() ^ (Math.random() * 0x100000000)) >>> 0,
    replayPath: env.FUZZ_PATH || undefined,
    targets: list("FUZZ_TARGETS"),
    sizes: mode === "ci" ? CI_SIZES : LONG_SIZES,
    answerTimeoutMs: mode === "ci" ? 15_000 : 30_000,
    shrinkBudgetMs: mode === "ci" ? 30_000 : 120_000,
  };
}

/**
 * Each target's share of its dialect's cases, among the targets being run (or CI's fixed count),
 * divided by its `caseCost` (a target whose cases each cost as much as that many ordinary ones).
 */
export function casesPerTarget(settings: FuzzSettings, targets: ReadonlyArray<{ dialect: string }>, target: { dialect: string; caseCost?: number }): number {
  const cost = target.caseCost ?? 1;
  if (settings.casesPerDialect === undefined) return Math.ceil(CI_CASES_PER_TARGET / cost);
  const sharing = targets.filter((t) => t.dialect === target.dialect).length;
  return Math.ceil(settings.casesPerDialect / Math.max(1, sharing) / cost);
}
