import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Script } from "node:vm";

/**
 * Runs the command line's bundle (one CommonJS file) with a V8 code cache, as Node 22's
 * module.enableCompileCache would: Node 20 keeps no cache of ES modules, and compiling the bundle,
 * then the functions a start runs, was most of the gateway's start-up. The build makes the cache
 * after a real start (scripts/warm-cli-cache.mjs), so it holds the functions a start runs, not only
 * the top level. A cache is named by the SHA-256 of the bundle it was made from, which the build
 * that wrote both gives the launcher (hashing 4 MB at every start would cost more than the rest of
 * reading the cache); V8 itself rejects a cache made by another Node or with other flags, or for a
 * source of another length, and the bundle is then compiled as usual.
 */

export type CodeCacheUse = "used" | "rejected" | "none";

export interface CachedScript {
  readonly file: string;
  readonly script: Script;
  readonly cache: CodeCacheUse;
  /** Where this source's cache is (or would be) kept; undefined for a script run without one. */
  readonly cachePath: string | undefined;
}

/** The cache of the bundle whose SHA-256 is `sha256`, in `cacheDir`. */
export function codeCachePath(cacheDir: string, sha256: string): string {
  return join(cacheDir, `tau-gateway-${sha256}.v8cache`);
}

/** Compiles `file` wrapped as Node wraps a CommonJS module, with the cache at `cachePath` when there is one. */
export function compileCommonJs(file: string, cachePath?: string): CachedScript {
  const source = readFileSync(file, "utf8");
  let cachedData: Buffer | undefined;
  try {
    if (cachePath !== undefined) cachedData = readFileSync(cachePath);
  } catch {
    // No cache for this source: compiled as usual.
  }
  // The same text whether the cache is made or used: V8 checks the length of exactly this.
  // No import() in it: V8 refuses one in a script compiled without a loader, and Node's loaders for
  // scripts are experimental (the build turns the bundle's imports of Node's modules into require).
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: file, cachedData });
  return { file, script, cachePath, cache: cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "used" };
}

/** Runs the compiled module as `require` would run it; returns its exports. */
export function runCommonJs(compiled: CachedScript): unknown {
  const module = { exports: {} as unknown };
  const body = compiled.script.runInThisContext() as (...args: unknown[]) => void;
  body(module.exports, createRequire(compiled.file), module, compiled.file, dirname(compiled.file));
  return module.exports;
}

/** Writes the cache of everything V8 has compiled of the script so far (written whole, then renamed: a process starting meanwhile never reads half a cache). */
export function writeCodeCache(compiled: CachedScript & { cachePath: string }): string {
  mkdirSync(dirname(compiled.cachePath), { recursive: true });
  writeFileSync(`${compiled.cachePath}.tmp`, compiled.script.createCachedData());
  renameSync(`${compiled.cachePath}.tmp`, compiled.cachePath);
  return compiled.cachePath;
}
