import { UsageError } from "./usage-error.js";

/**
 * The order in which `npm run bench -- --compare <ref>` runs the two builds. Each round runs both,
 * and every other round swaps them (old new, new old, old new, …): a machine that gets busier or
 * quieter during the series then weighs on both builds alike instead of always on the second.
 */

export type Build = "old" | "new";

export function alternationSchedule(rounds: number): Build[] {
  if (!Number.isInteger(rounds) || rounds < 1) throw new UsageError(`rounds must be a whole number of at least 1, not ${rounds}`);
  const schedule: Build[] = [];
  for (let round = 0; round < rounds; round++) schedule.push(...(round % 2 === 0 ? (["old", "new"] as const) : (["new", "old"] as const)));
  return schedule;
}

/** `--rounds` as typed on the command line. */
export function parseRounds(text: string): number {
  const rounds = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(rounds >= 1)) throw new UsageError(`--rounds takes a whole number of at least 1 (each round runs the whole benchmark once per build), not "${text}"`);
  return rounds;
}
