import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { documentedPages, pageBlocks } from "../support/docs.js";

/**
 * Every fenced block of the README and docs/ is run or checked by a test as written, or named
 * below with the reason it cannot be: a block added to a page, or one whose text changes so
 * that the test taking it no longer finds it, fails here until a test takes it or it is listed.
 * Tests take a block with `docBlock(PAGE, START)` (test/support/docs.ts), literal arguments,
 * which this file finds in the test files (test/ and interop/test/, the heavy real clients).
 */

interface Skipped {
  page: string;
  /** How the block starts, as docBlock's START. */
  start: string;
  reason: string;
}

const SKIPPED: Skipped[] = [];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules") return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? testFiles(path) : entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every `docBlock("PAGE", "START")` call of the test files, with the file making it. */
function takenBlocks(): Array<{ file: string; page: string; start: string }> {
  const call = /\bdocBlock\(\s*("(?:[^"\\]|\\.)*")\s*,\s*("(?:[^"\\]|\\.)*")\s*\)/g;
  return [join(repoRoot, "test"), join(repoRoot, "interop/test")].flatMap(testFiles).flatMap((path) => {
    const file = relative(repoRoot, path);
    return [...readFileSync(path, "utf8").matchAll(call)].map((m) => ({ file, page: JSON.parse(m[1]!) as string, start: JSON.parse(m[2]!) as string }));
  });
}

describe("the documentation's code blocks", () => {
  const taken = takenBlocks();
  const blocks = documentedPages().flatMap(pageBlocks);

  it("each is taken by a test or skipped with a reason, not both", () => {
    const unaccounted = blocks.flatMap((block) => {
      const by = taken.filter((t) => t.page === block.page && block.text.startsWith(t.start)).map((t) => t.file);
      const skips = SKIPPED.filter((s) => s.page === block.page && block.text.startsWith(s.start));
      if (by.length > 0 && skips.length === 0) return [];
      if (by.length === 0 && skips.length === 1) return [];
      const where = `${block.page}:${block.line} (${block.language || "no language"}) ${JSON.stringify(block.text.split("\n")[0])}`;
      return [by.length === 0 && skips.length === 0 ? `${where}: no test takes it and it is not skipped` : `${where}: taken by ${by.join(", ") || "none"}, skipped ${skips.length} times`];
    });
    expect(unaccounted).toEqual([]);
  });

  it("what the tests take and the skip list names each match exactly one block", () => {
    const ambiguous = [...taken.map((t) => ({ ...t, what: `taken by ${t.file}` })), ...SKIPPED.map((s) => ({ ...s, what: "skipped" }))].flatMap((entry) => {
      const matches = blocks.filter((b) => b.page === entry.page && b.text.startsWith(entry.start));
      return matches.length === 1 ? [] : [`${entry.page} ${JSON.stringify(entry.start)} (${entry.what}): ${matches.length} blocks`];
    });
    expect(ambiguous).toEqual([]);
  });

  it("each skip has its reason", () => {
    for (const skip of SKIPPED) expect(skip.reason.length, `${skip.page} ${skip.start}`).toBeGreaterThan(20);
  });
});
