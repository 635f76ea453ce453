import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * `npm run build` in a checkout (this one, or the other build of a comparison). Returns a note when
 * the build reported errors but still produced the command line: tsc emits despite type errors, and
 * a type error elsewhere in the tree need not stop a measurement.
 */
export function buildCheckout(root: string, log: (line: string) => void): string | undefined {
  log(`building (npm run build in ${resolve(root)})`);
  const result = spawnSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: ["ignore", process.stderr, "inherit"] });
  if (result.status === 0) return undefined;
  const cli = cliOf(root);
  if (!existsSync(cli)) throw new Error(`the build in ${root} failed and ${cli} does not exist`);
  log(`WARNING: the build in ${root} reported errors; measuring the JavaScript it emitted`);
  return "the build reported type errors; the JavaScript it emitted was measured";
}

/** The built command line of a checkout: the bundle, or for builds from before it, the compiled entry point. */
export function cliOf(root: string): string {
  const bundle = join(root, "dist", "tau-gateway.mjs");
  const unbundled = join(root, "dist", "src", "cli", "main.js");
  return existsSync(bundle) || !existsSync(unbundled) ? bundle : unbundled;
}
