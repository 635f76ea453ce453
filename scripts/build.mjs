// `npm run build`: compiles src/ and generated/ with tsc into dist/ (the library the package exports,
// and its .d.ts), then bundles the command line as `npm run build:cli` does (scripts/bundle-cli.mjs).
//
//   node scripts/build.mjs [--outDir DIR]    (npm run build -- --outDir DIR: both outputs go to DIR)
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleCli, outDirOf } from "./bundle-cli.mjs";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const compiled = spawnSync(process.execPath, [tsc, "-p", join(repoRoot, "tsconfig.build.json"), ...args], { cwd: repoRoot, stdio: "inherit" });
if (compiled.status === null) process.exit(1);

await bundleCli(outDirOf(args));

// Like tsc, which emits despite type errors: the bundle is written, and the status reports the errors.
process.exitCode = compiled.status;
