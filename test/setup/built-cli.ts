import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { bundleCli } from "../../scripts/bundle-cli.mjs";

/**
 * Bundles the command line once per test run, as `npm run build:cli` does, into a directory laid out
 * as an installed package (package.json, schema/, generated/, inspector/ and node_modules/ beside dist/). Every
 * test that runs `tau-gateway` as a process runs this bundle (test/support/cli.ts): a process loads
 * one file instead of compiling some 300 modules through tsx, and the suites test what users run.
 */

declare module "vitest" {
  export interface ProvidedContext {
    /** dist/tau-gateway.mjs of the package this run built. */
    cliBundle: string;
  }
}

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export default async function setup(project: TestProject): Promise<() => void> {
  const root = mkdtempSync(join(tmpdir(), "tau-gateway-test-cli-"));
  for (const name of ["package.json", "schema", "generated", "inspector", "node_modules"]) symlinkSync(join(repoRoot, name), join(root, name));
  await bundleCli(join(root, "dist"));
  project.provide("cliBundle", join(root, "dist/tau-gateway.mjs"));
  return () => rmSync(root, { recursive: true, force: true });
}
