// `npm run build:cli`: bundles the command line into dist/tau-gateway.mjs, the file `bin`, `npm start`
// and the Dockerfile run, with esbuild alone (no type-check: `npm run typecheck` does that, and
// `npm run build` adds the library). Loading one bundle instead of some 300 compiled modules plus the
// dependencies' own files is most of the start-up time saved; the commands' own modules and what
// only some runs need (ioredis for a Redis store) stay in lazily loaded chunks under dist/chunks/.
// Last, V8's code caches of the precompiled validators go to dist/validator-cache/.
//
//   node scripts/bundle-cli.mjs [--outDir DIR]    (npm run build:cli -- --outDir DIR)
import { rmSync } from "node:fs";
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
      contents: `module.exports = require(require("node:module").createRequire(require.resolve("fastify")).resolve(${JSON.stringify(args.path)}));`,
      loader: "js",
    }));
  },
};

/** Writes dist/tau-gateway.mjs, its chunks and source map, and the validators' code caches into `outDir`. */
export async function bundleCli(outDir) {
  // Chunk names carry a content hash, so stale chunks of an earlier build are removed first.
  rmSync(join(outDir, "chunks"), { recursive: true, force: true });
  await build({
    // The inspector's transcript checks run in a worker thread of their own module (transcript-check.ts finds it here).
    entryPoints: { "tau-gateway": join(repoRoot, "src/cli/main.ts"), "transcript-worker": join(repoRoot, "src/gateway/inspector/transcript-worker.ts") },
    outdir: outDir,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    logLevel: "warning",
    // The dependencies are CommonJS; in an ES module they need a `require` for node's built-ins.
    banner: { js: 'import { createRequire as __tauGatewayCreateRequire } from "node:module"; const require = __tauGatewayCreateRequire(import.meta.url);' },
    // ws loads these native add-ons when they are installed and works without them.
    external: ["bufferutil", "utf-8-validate"],
    plugins: [fastifyLazyRequires],
  });
  await writeValidatorCodeCaches(join(outDir, "validator-cache"));
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
