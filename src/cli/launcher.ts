#!/usr/bin/env node
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { codeCachePath, compileCommonJs, runCommonJs } from "./cached-script.js";

/** The SHA-256 of dist/tau-gateway.cjs, set by the build that wrote it (scripts/bundle-cli.mjs). */
declare const TAU_GATEWAY_BUNDLE_SHA256: string;

// dist/tau-gateway.mjs, what `bin` names: runs the command line's bundle beside it
// (dist/tau-gateway.cjs, src/cli/main.ts) with the code cache the build made (dist/cli-cache/);
// `validate`, a short run over the user's files, runs its own small bundle (src/cli/validate-main.ts).
const dist = dirname(fileURLToPath(import.meta.url));
if (process.argv[2] === "validate") runCommonJs(compileCommonJs(join(dist, "tau-gateway-validate.cjs")));
else runCommonJs(compileCommonJs(join(dist, "tau-gateway.cjs"), codeCachePath(join(dist, "cli-cache"), TAU_GATEWAY_BUNDLE_SHA256)));
