// `npm run build`: compiles src/ and generated/ with tsc into dist/ (the library the package exports,
// and its .d.ts), then bundles the command line into dist/tau-gateway.mjs, the file `bin`, `npm start`
// and the Dockerfile run. Loading one bundle instead of some 300 compiled modules plus the
// dependencies' own files is most of the start-up time saved; the commands' own modules and what
// only some runs need (ioredis for a Redis store) stay in lazily loaded chunks under dist/chunks/.
// Last, V8's code caches of the precompiled validators go to dist/validator-cache/.
//
//   node scripts/build.mjs [--outDir DIR]    (npm run build -- --outDir DIR: both outputs go to DIR)
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const outDirFlag = args.indexOf("--outDir");
const outDir = resolve(repoRoot, outDirFlag >= 0 ? args[outDirFlag + 1] : "dist");

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const compiled = spawnSync(process.execPath, [tsc, "-p", join(repoRoot, "tsconfig.build.json"), ...args], { cwd: repoRoot, stdio: "inherit" });
if (compiled.status === null) process.exit(1);

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

// Chunk names carry a content hash, so stale chunks of an earlier build are removed first.
rmSync(join(outDir, "chunks"), { recursive: true, force: true });
await build({
  entryPoints: { "tau-gateway": join(repoRoot, "src/cli/main.ts") },
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

// V8's code caches of the precompiled validators, made by this Node with the module that reads them
// (src/validation/code-cache.ts, as tsc just compiled it): parsing them is a tenth of start-up.
const validatorCacheDir = join(outDir, "validator-cache");
rmSync(validatorCacheDir, { recursive: true, force: true });
const { writeCodeCaches } = await import(pathToFileURL(join(outDir, "src/validation/code-cache.js")).href);
writeCodeCaches(join(repoRoot, "generated/validators"), validatorCacheDir);

// Like tsc, which emits despite type errors: the bundle is written, and the status reports the errors.
process.exitCode = compiled.status;
