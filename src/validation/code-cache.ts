import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";

/**
 * Loads a CommonJS module as `require` would, with V8's code cache when one was made for exactly
 * this source. The precompiled validators are megabytes of code, and parsing the Tau bundle's alone
 * is about a tenth of the gateway's start-up; with a cache V8 reads the compiled code instead. Node
 * 20 has no module.enableCompileCache (Node 22 has), so the build makes the caches
 * (`writeCodeCaches`) and this reads them. A cache is named by the SHA-256 of the source it was made
 * from (V8 itself checks only the source's length, and its own version and flags, rejecting a
 * cache made by another Node): a changed source finds no cache and is compiled as usual.
 */

export type CodeCacheUse = "used" | "rejected" | "none";

export function loadWithCodeCache(file: string, cacheDir: string | undefined): { exports: unknown; cache: CodeCacheUse } {
  const source = readFileSync(file);
  let cachedData: Buffer | undefined;
  if (cacheDir) {
    try {
      cachedData = readFileSync(cachePath(cacheDir, file, source));
    } catch {
      // No cache for this source: compiled as usual.
    }
  }
  const { script, exports } = run(file, source, cachedData);
  return { exports, cache: cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "used" };
}

/** Makes a cache in `cacheDir` for each `.cjs` module in `moduleDir` (after running its top level, so what that compiles is cached too); returns the files written. */
export function writeCodeCaches(moduleDir: string, cacheDir: string): string[] {
  mkdirSync(cacheDir, { recursive: true });
  const written: string[] = [];
  for (const name of readdirSync(moduleDir).filter((n) => n.endsWith(".cjs"))) {
    const file = join(moduleDir, name);
    const source = readFileSync(file);
    const target = cachePath(cacheDir, file, source);
    // Written whole, then renamed: a process starting meanwhile never reads half a cache.
    writeFileSync(`${target}.tmp`, run(file, source, undefined).script.createCachedData());
    renameSync(`${target}.tmp`, target);
    written.push(target);
  }
  return written;
}

function cachePath(cacheDir: string, file: string, source: Buffer): string {
  return join(cacheDir, `${basename(file, ".cjs")}-${createHash("sha256").update(source).digest("hex")}.v8cache`);
}

/** Compiles and runs the module in the wrapper Node gives CommonJS modules (the same text whether a cache is made or used). */
function run(file: string, source: Buffer, cachedData: Buffer | undefined): { script: Script; exports: unknown } {
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source.toString("utf8")}\n})`;
  const script = new Script(wrapped, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file));
  return { script, exports: module.exports };
}
