// `npm run build:cli`: bundles the command line into dist/tau-gateway.cjs, run by dist/tau-gateway.mjs
// (the file `bin`, `npm start` and the Dockerfile run), with esbuild alone (no type-check: `npm run
// typecheck` does that, and `npm run build` adds the library). Loading one bundle instead of some 300
// compiled modules plus the dependencies' own files is most of the start-up time saved, and V8's
// cache of the bundle's compiled code (dist/cli-cache/, made by a real start) most of the rest; what
// only some runs need (ioredis for a Redis store, OpenTelemetry) is imported when first used.
// Last, V8's code caches of the precompiled validators go to dist/validator-cache/.
//
//   node scripts/bundle-cli.mjs [--outDir DIR]    (npm run build:cli -- --outDir DIR)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

/**
 * Fastify requires these inside functions, only when they are used: its default route-schema
 * compilers (the gateway passes its own lazy ones, src/gateway/schema-compilers.ts) and
 * light-my-request (`inject`). Bundled, their code (a quarter of the bundle, with their own ajv and
 * fast-json-stringify) would be parsed at every start; left out, each such `require` loads the package
 * from node_modules at run time, resolved from fastify's own folder as fastify would resolve it.
 */
const requiredLazilyByFastify = /^(@fastify\/ajv-compiler|@fastify\/fast-json-stringify-compiler|light-my-request)$/;
const fastifyLazyRequires = {
  name: "fastify-lazy-requires",
  setup(build) {
    build.onResolve({ filter: requiredLazilyByFastify }, (args) => ({ path: args.path, namespace: "from-fastify" }));
    build.onLoad({ filter: /.*/, namespace: "from-fastify" }, (args) => ({
      contents: `const { createRequire } = require("node:module"); module.exports = createRequire(createRequire(__filename).resolve("fastify"))(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
  },
};

/**
 * `import("http")` of a Node module (OpenTelemetry's exporter loads node:http and node:https that
 * way) would stay an import() in a CommonJS bundle, which V8 refuses in a script the launcher
 * compiles without a module loader (Node's loaders for scripts are experimental and warn): it is
 * made a require of the module instead, its exports as an import() would give them.
 */
const builtinDynamicImports = {
  name: "builtin-dynamic-imports",
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) =>
      args.kind === "dynamic-import" && isBuiltin(args.path) ? { path: args.path, namespace: "builtin-dynamic-import" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "builtin-dynamic-import" }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: "js" }));
  },
};

/**
 * Writes dist/tau-gateway.mjs (the launcher), dist/tau-gateway.cjs (the command line, one file) and
 * its source map, the bundle's code cache (dist/cli-cache/) and the validators' (dist/validator-cache/)
 * into `outDir`.
 */
export async function bundleCli(outDir) {
  // Earlier layouts' and builds' files: a cache is named by its bundle's hash, so old ones are removed.
  for (const stale of ["chunks", "cli-cache", "tau-gateway.mjs.map", "validate-worker.cjs", "validate-worker.cjs.map", "tau-gateway-validate.cjs", "tau-gateway-validate.cjs.map", "transcript-worker.mjs", "transcript-worker.mjs.map"]) rmSync(join(outDir, stale), { recursive: true, force: true });
  const common = { bundle: true, platform: "node", target: "node20", logLevel: "warning" };
  // One CommonJS file rather than ES module chunks: Node 20 caches the compiled code of neither, but
  // a script can be given V8's cache (src/cli/cached-script.ts). What only some runs need (ioredis
  // for a Redis store, OpenTelemetry, each command's and dialect's modules) is still imported
  // lazily: esbuild wraps such a module in a function run at its first import(), and with the cache
  // a function never run costs neither a parse nor a compile.
  const commonJs = {
    ...common,
    format: "cjs",
    sourcemap: "linked",
    // import.meta.url (the package's folders are found from it) as the bundle's own file URL.
    define: { "import.meta.url": "__tauGatewayImportMetaUrl" },
    inject: [join(repoRoot, "scripts/cli-import-meta-url.mjs")],
    // ws loads these native add-ons when they are installed and works without them.
    external: ["bufferutil", "utf-8-validate"],
    plugins: [fastifyLazyRequires, builtinDynamicImports],
  };
  await build({ ...commonJs, entryPoints: [join(repoRoot, "src/cli/main.ts")], outfile: join(outDir, "tau-gateway.cjs") });
  // The worker threads of `validate --jobs N` (src/cli/validate-jobs.ts finds it beside the bundle):
  // a thread has modules of its own, so the validation code it bundles again is no second copy of any state.
  await build({ ...commonJs, entryPoints: [join(repoRoot, "src/cli/validate-worker.ts")], outfile: join(outDir, "validate-worker.cjs") });
  // The inspector's transcript checks run in a worker thread of this module (transcript-check.ts finds it beside the bundle).
  await build({ ...commonJs, entryPoints: [join(repoRoot, "src/gateway/inspector/transcript-worker.ts")], outfile: join(outDir, "transcript-worker.cjs") });
  // `validate` alone, which the launcher runs for that command: a check of a transcript then loads
  // none of the gateway's modules (a third of its memory when it ran from the whole bundle).
  await build({ ...commonJs, entryPoints: [join(repoRoot, "src/cli/validate-main.ts")], outfile: join(outDir, "tau-gateway-validate.cjs") });
  for (const file of ["tau-gateway.cjs", "validate-worker.cjs", "transcript-worker.cjs", "tau-gateway-validate.cjs"]) asciiComments(join(outDir, file));
  // The launcher `bin` names: an ES module of a few lines (node built-ins only), told the bundle's hash.
  const bundleFile = join(outDir, "tau-gateway.cjs");
  // The entry's `#!` line, legal only at the very start of a script, which the launcher wraps in a
  // function: made a comment of the same length, so the source map still fits.
  const text = readFileSync(bundleFile, "utf8");
  if (text.startsWith("#!")) writeFileSync(bundleFile, `//${text.slice(2)}`);
  const sha256 = createHash("sha256").update(readFileSync(bundleFile)).digest("hex");
  await build({
    ...common,
    entryPoints: [join(repoRoot, "src/cli/launcher.ts")],
    outfile: join(outDir, "tau-gateway.mjs"),
    format: "esm",
    define: { TAU_GATEWAY_BUNDLE_SHA256: JSON.stringify(sha256) },
  });
  warmCliCodeCache(bundleFile, join(outDir, "cli-cache"), sha256);
  await writeValidatorCodeCaches(join(outDir, "validator-cache"));
}

/**
 * Makes a bundle's text ASCII: V8 keeps a source with any other character as two bytes a character,
 * so the 4.6 MB bundle was read into 9 MB and decoded the slow way at every start (15 ms of some
 * 240 here), for a few dashes and section signs in comments. esbuild writes code as ASCII (its
 * default charset escapes everything else) and leaves comments as they are: each other UTF-16
 * code unit, all of them in comments, becomes "?", so every position, and the source map, stays
 * where it was. A non-ASCII character on a line that is no comment fails the build.
 */
function asciiComments(file) {
  const text = readFileSync(file, "utf8");
  if (/^[\x00-\x7f]*$/.test(text)) return;
  const lines = text.split("\n").map((line, index) => {
    if (/^[\x00-\x7f]*$/.test(line)) return line;
    if (!/^\s*(\/\/|\/\*|\*)/.test(line)) throw new Error(`${file}:${index + 1}: a character other than ASCII outside a comment: ${line.slice(0, 200)}`);
    return line.replace(/[^\x00-\x7f]/g, "?");
  });
  writeFileSync(file, lines.join("\n"));
}

/**
 * The bundle's code cache, made by a real start in a process of its own (scripts/warm-cli-cache.mjs).
 * Without it the command line works as well and starts slower, so a failure is a warning.
 */
function warmCliCodeCache(bundleFile, cacheDir, sha256) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TAU_GATEWAY_") && !name.startsWith("OTEL_")));
  const warmed = spawnSync(process.execPath, [join(repoRoot, "scripts/warm-cli-cache.mjs"), bundleFile, cacheDir, sha256], { env, encoding: "utf8", timeout: 120_000 });
  if (warmed.status !== 0) process.stderr.write(`bundle-cli: no code cache of the command line (it will start slower): ${(warmed.stderr || warmed.error?.message || `exit ${warmed.status ?? warmed.signal}`).trim()}\n`);
}

/**
 * V8's code caches of the precompiled validators, made by this Node with the module that reads them
 * (src/validation/code-cache.ts, transpiled here by esbuild): parsing them is a tenth of start-up.
 */
async function writeValidatorCodeCaches(validatorCacheDir) {
  rmSync(validatorCacheDir, { recursive: true, force: true });
  const transpiled = await build({
    entryPoints: [join(repoRoot, "src/validation/code-cache.ts")],
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    write: false,
    logLevel: "warning",
  });
  const module = `data:text/javascript;base64,${Buffer.from(transpiled.outputFiles[0].contents).toString("base64")}`;
  const { writeCodeCaches } = await import(module);
  writeCodeCaches(join(repoRoot, "generated/validators"), validatorCacheDir);
}

/** `--outDir DIR` of the command line, relative to the repository; dist/ without it. */
export function outDirOf(args) {
  const flag = args.indexOf("--outDir");
  return resolve(repoRoot, flag >= 0 ? args[flag + 1] : "dist");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleCli(outDirOf(process.argv.slice(2)));
}
