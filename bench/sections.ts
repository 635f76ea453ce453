import { UsageError } from "./usage-error.js";

/**
 * The parts of `npm run bench`, in the order they run. `--only` picks some of them: to look at one
 * figure closely, to compare two builds on what a change touched, or to try the harness in a
 * minute.
 */
export const SECTIONS = ["round-trip", "streaming", "translation", "peer", "send-round", "fan-out", "replicas", "sessions", "validation", "patterns", "hostile", "memory", "startup"] as const;

export type Section = (typeof SECTIONS)[number];

/** `--only` values as typed (repeated, or comma-separated) → the sections to run; every one without any. */
export function selectSections(only: readonly string[] | undefined): ReadonlySet<Section> {
  const names = (only ?? []).flatMap((value) => value.split(",")).map((name) => name.trim()).filter((name) => name !== "");
  if (names.length === 0) return new Set(SECTIONS);
  const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new UsageError(`--only: no section ${unknown.map((n) => `"${n}"`).join(", ")}; the sections are ${SECTIONS.join(", ")}`);
  return new Set(SECTIONS.filter((section) => names.includes(section)));
}
