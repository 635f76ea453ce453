import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { writeCodeCaches } from "../../src/validation/code-cache.js";

/**
 * CommonJS modules loaded with V8's code cache, as the precompiled validators are: a cache only
 * ever for the source it was made from. Each load runs in a fresh process, as a gateway starting
 * does (within one process V8 reuses what it compiled before and never reads a cache again).
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function moduleDir(source: string): { dir: string; file: string; cacheDir: string } {
  const dir = mkdtempSync(join(tmpdir(), "code-cache-"));
  dirs.push(dir);
  const file = join(dir, "checks.cjs");
  writeFileSync(file, source);
  return { dir, file, cacheDir: join(dir, "cache") };
}

// Uses what a generated module uses: strict mode, require, exports.
const SOURCE = `"use strict";\nconst { isDeepStrictEqual } = require("node:util");\nexports.isAnswer = (v) => isDeepStrictEqual(v, { answer: 42 });\nexports.where = __filename;\n`;

/** Loads the module in a fresh process: whether the cache was used, and what the module's checks say of `{answer}`. */
function loadFresh(file: string, cacheDir: string | undefined, answer: number): { cache: string; isAnswer: boolean; where: string } {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const script = `
    import { loadWithCodeCache } from "./src/validation/code-cache.ts";
    const { exports, cache } = loadWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)});
    console.log(JSON.stringify({ cache, isAnswer: exports.isAnswer({ answer: ${answer} }), where: exports.where }));`;
  return JSON.parse(execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: root, encoding: "utf8" }));
}

describe("loading a module with its code cache", () => {
  it("loads it as require would, without a cache", () => {
    const { file } = moduleDir(SOURCE);
    expect(loadFresh(file, undefined, 42)).toEqual({ cache: "none", isAnswer: true, where: file });
    expect(loadFresh(file, undefined, 41).isAnswer).toBe(false);
  });

  it("uses the cache made for the source, named by its hash", () => {
    const { dir, file, cacheDir } = moduleDir(SOURCE);
    expect(writeCodeCaches(dir, cacheDir)).toHaveLength(1);
    expect(readdirSync(cacheDir)).toEqual([expect.stringMatching(/^checks-[0-9a-f]{64}\.v8cache$/)]);
    expect(loadFresh(file, cacheDir, 42)).toEqual({ cache: "used", isAnswer: true, where: file });
  });

  it("finds no cache once the source changed, even to one of the same length, and runs the new source", () => {
    const { dir, file, cacheDir } = moduleDir(SOURCE);
    writeCodeCaches(dir, cacheDir);
    const changed = SOURCE.replace("answer: 42", "answer: 43");
    expect(changed.length).toBe(SOURCE.length);
    writeFileSync(file, changed);
    expect(loadFresh(file, cacheDir, 43)).toEqual({ cache: "none", isAnswer: true, where: file });
  });

  it("compiles the source as usual when V8 rejects the cache (another Node's, or damaged)", () => {
    const { dir, file, cacheDir } = moduleDir(SOURCE);
    const [target] = writeCodeCaches(dir, cacheDir);
    writeFileSync(target!, Buffer.from("not a code cache"));
    expect(loadFresh(file, cacheDir, 42)).toEqual({ cache: "rejected", isAnswer: true, where: file });
  });
});
