import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FuzzTarget } from "./target.js";

const TARGETS_DIR = fileURLToPath(new URL("./targets/", import.meta.url));

/**
 * Every target in targets/ (one file each, default export), in file-name order; with `only`, those
 * whose file or display name contains one of the given strings.
 */
export async function loadTargets(only?: string[]): Promise<FuzzTarget[]> {
  const files = readdirSync(TARGETS_DIR)
    .filter((f) => f.endsWith(".ts"))
    .sort();
  const targets: FuzzTarget[] = [];
  for (const file of files) {
    const target = ((await import(new URL(`./targets/${file}`, import.meta.url).href)) as { default: FuzzTarget }).default;
    if (!only || only.some((s) => file.includes(s) || target.name.includes(s))) targets.push(target);
  }
  return targets;
}
