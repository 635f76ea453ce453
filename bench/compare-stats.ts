import type { Build } from "./compare-plan.js";
import type { Figure } from "./compare-figures.js";

/**
 * Lines up the figures of every round by row and compares the two builds: the median of each
 * build's rounds, new ÷ old, and how far each build moved across its own rounds (the noise a
 * difference has to exceed before it means anything on this machine).
 */

export interface RoundFigures {
  build: Build;
  figures: readonly Figure[];
}

export type Verdict = "worse" | "better" | "within noise" | "no noise estimate" | "not measured";

export interface RowComparison {
  label: string;
  better: Figure["better"];
  /** The build's figure in each of its rounds, in the order they ran (unmeasured rounds left out). */
  old: number[];
  new: number[];
  oldMedian: number | null;
  newMedian: number | null;
  /** newMedian ÷ oldMedian. */
  ratio: number | null;
  /** The larger of the two builds' relative spreads across their rounds (relativeSpread); null with fewer than 2 rounds of either. */
  noise: number | null;
  verdict: Verdict;
}

/** The middle value (the mean of the two middle ones for an even count); null for none. */
export function middle(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

/**
 * max ÷ min − 1: by how much one build's highest round exceeded its lowest; null below 2 values.
 * A factor, like the ratio it is compared with, so a slow outlier round counts as much as a fast one.
 */
export function relativeSpread(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const [low, high] = [Math.min(...values), Math.max(...values)];
  if (!(low > 0)) return null;
  return high / low - 1;
}

/**
 * "worse" when the new build is worse than the old by more than the noise: for a row where lower is
 * better, new ÷ old above 1 + noise; where higher is better, old ÷ new above 1 + noise. "better"
 * likewise the other way.
 */
export function verdictOf(ratio: number | null, noise: number | null, better: Figure["better"]): Verdict {
  if (ratio === null || !Number.isFinite(ratio) || ratio <= 0) return "not measured";
  if (noise === null) return "no noise estimate";
  const cost = better === "lower" ? ratio : 1 / ratio;
  if (cost > 1 + noise) return "worse";
  if (1 / cost > 1 + noise) return "better";
  return "within noise";
}

export function compareRounds(rounds: readonly RoundFigures[]): RowComparison[] {
  const rows = new Map<string, { better: Figure["better"]; old: number[]; new: number[] }>();
  for (const round of rounds) {
    for (const figure of round.figures) {
      let row = rows.get(figure.label);
      if (!row) rows.set(figure.label, (row = { better: figure.better, old: [], new: [] }));
      if (figure.value !== null && Number.isFinite(figure.value)) row[round.build].push(figure.value);
    }
  }
  return [...rows].map(([label, row]) => {
    const oldMedian = middle(row.old);
    const newMedian = middle(row.new);
    const ratio = oldMedian === null || newMedian === null || oldMedian === 0 ? null : newMedian / oldMedian;
    const spreads = [relativeSpread(row.old), relativeSpread(row.new)];
    const noise = spreads.includes(null) ? null : Math.max(...(spreads as number[]));
    return { label, better: row.better, old: row.old, new: row.new, oldMedian, newMedian, ratio, noise, verdict: verdictOf(ratio, noise, row.better) };
  });
}
