import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { compileFunction } from "node:vm";

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
  const { compiled, exports } = run(file, source, cachedData ? { cachedData } : {});
  return { exports, cache: cachedData === undefined ? "none" : compiled.cachedDataRejected ? "rejected" : "used" };
}

/** Makes a cache in `cacheDir` for each `.cjs` module in `moduleDir`; returns the files written. */
export function writeCodeCaches(moduleDir: string, cacheDir: string): string[] {
  mkdirSync(cacheDir, { recursive: true });
  const written: string[] = [];
  for (const name of readdirSync(moduleDir).filter((n) => n.endsWith(".cjs"))) {
    const file = join(moduleDir, name);
    const source = readFileSync(file);
    const target = cachePath(cacheDir, file, source);
    // Written whole, then renamed: a process starting meanwhile never reads half a cache.
    const { cachedData } = run(file, source, { produceCachedData: true }).compiled;
    if (!cachedData) throw new Error(`V8 made no code cache of ${file}`);
    writeFileSync(`${target}.tmp`, cachedData);
    renameSync(`${target}.tmp`, target);
    written.push(target);
  }
  return written;
}

function cachePath(cacheDir: string, file: string, source: Buffer): string {
  return join(cacheDir, `${basename(file, ".cjs")}-${createHash("sha256").update(source).digest("hex")}.v8cache`);
}

/** What vm.compileFunction returns besides the function (Node's documented extra properties). */
type CompiledModule = ((...args: unknown[]) => void) & { cachedData?: Buffer; cachedDataRejected?: boolean };

/**
 * Compiles the module as the body of a function with the parameters Node gives CommonJS modules
 * (as Node's own loader does; the same whether a cache is made or used), and runs it.
 */
function run(file: string, source: Buffer, cache: { cachedData?: Buffer; produceCachedData?: boolean }): { compiled: CompiledModule; exports: unknown } {
  const compiled = compileFunction(source.toString("utf8"), ["exports", "require", "module", "__filename", "__dirname"], { filename: file, ...cache }) as CompiledModule;
  const module = { exports: {} as unknown };
  compiled(module.exports, createRequire(file), module, file, dirname(file));
  return { compiled, exports: module.exports };
}
