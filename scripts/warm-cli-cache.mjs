// Makes the V8 code cache of the command line's bundle (src/cli/cached-script.ts reads it): runs the
// bundle as `tau-gateway serve --port 0` (embedded host, loopback, no token, logs off) in this
// process until its first /readyz 200, stops it as SIGTERM does, and writes the cache on exit, so it
// holds what a start compiles (the top level, Fastify's and every dialect's set-up), not only what
// V8 compiles up front. Run by scripts/bundle-cli.mjs in a process of its own.
//
//   node scripts/warm-cli-cache.mjs BUNDLE.cjs CACHE_DIR SHA256
import { get } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const [bundle, cacheDir, sha256] = process.argv.slice(2);
if (!bundle || !cacheDir || !sha256) {
  process.stderr.write("usage: node scripts/warm-cli-cache.mjs BUNDLE.cjs CACHE_DIR SHA256\n");
  process.exit(2);
}
const repoRoot = fileURLToPath(new URL("..", import.meta.url));

// The module that reads the cache, transpiled here, so the cache is made exactly as it is read.
const transpiled = await build({ entryPoints: [join(repoRoot, "src/cli/cached-script.ts")], bundle: true, format: "esm", platform: "node", target: "node20", write: false, logLevel: "warning" });
const { codeCachePath, compileCommonJs, runCommonJs, writeCodeCache } = await import(`data:text/javascript;base64,${Buffer.from(transpiled.outputFiles[0].contents).toString("base64")}`);

const deadline = setTimeout(() => {
  process.stderr.write("warm-cli-cache: the gateway was not ready within 60 s\n");
  process.exit(1);
}, 60_000);
deadline.unref();

// The gateway's own output is not the build's: its stderr is read for the listening line only.
let written = "";
const listening = new Promise((resolve) => {
  process.stderr.write = (chunk) => {
    written += String(chunk);
    const match = /tau-gateway listening on (http:\/\/\S+)/.exec(written);
    if (match) resolve(match[1]);
    return true;
  };
});

const compiled = compileCommonJs(bundle, codeCachePath(cacheDir, sha256));
process.on("exit", (code) => {
  if (code === 0) writeCodeCache(compiled);
});
process.argv = [process.argv[0], bundle, "serve", "--port", "0", "--log-level", "silent"];
runCommonJs(compiled);

const base = await listening;
while ((await status(`${base}/readyz`)) !== 200) await new Promise((resolve) => setTimeout(resolve, 10));
process.kill(process.pid, "SIGTERM");

function status(url) {
  return new Promise((resolve) => {
    const request = get(url, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", () => resolve(0));
  });
}
