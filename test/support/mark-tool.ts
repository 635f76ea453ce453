import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Cleanups } from "./cleanups.js";

/** The Tau turn (of the scripted agent) that calls the `mark` command tool. */
export const CALL_MARK = "/tool mark {}";

/**
 * A tools file (`--tools-config`) with one command tool, `mark`, that appends a line to `marker`
 * each time it runs: how a test counts that a command ran, and how often. Removed after the test.
 */
export function markToolsFile(cleanups: Cleanups): { file: string; marker: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "mark-tool-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const marker = join(dir, "marker");
  const file = join(dir, "tools.json");
  const tool = {
    name: "mark",
    description: "Records that it ran.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    command: "/bin/sh",
    args: ["-c", `echo ran >> '${marker}'; echo marked`],
  };
  writeFileSync(file, JSON.stringify({ tools: [tool] }));
  return { file, marker };
}

/** How many times `mark` ran. */
export const markRuns = (marker: string): number => (existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean).length : 0);
