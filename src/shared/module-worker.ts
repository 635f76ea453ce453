import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * A worker thread running one of the package's modules, wherever the package runs from: the
 * command line's bundle (`NAME.cjs` beside it, scripts/bundle-cli.mjs builds it), the compiled
 * library (`NAME.js`), or a checkout run from its TypeScript source (the tests). From source the
 * module and what it imports are bundled into one script by esbuild (a development dependency,
 * present wherever the sources are), once per process, and run as the worker's code: loading the
 * sources one by one through a TypeScript loader costs each new worker seconds on a cold cache
 * (tens of seconds on a loaded machine), longer than the work it was started for may wait.
 *
 * `near` is the caller's import.meta.url; `name` the worker module's file name without extension.
 */
export function moduleWorker(near: string, name: string, options: WorkerOptions = {}): Worker {
  for (const candidate of [`./${name}.cjs`, `./${name}.js`]) {
    const url = new URL(candidate, near);
    if (existsSync(fileURLToPath(url))) return new Worker(url, options);
  }
  const source = new URL(`./${name}.ts`, near);
  if (!existsSync(fileURLToPath(source))) throw new Error(`the worker module ${name} is missing from this installation`);
  return new Worker(bundledSource(source), { ...options, eval: true });
}

const bundles = new Map<string, string>();

function bundledSource(entry: URL): string {
  const cached = bundles.get(entry.href);
  if (cached !== undefined) return cached;
  const { buildSync } = createRequire(import.meta.url)("esbuild") as typeof import("esbuild");
  const { outputFiles } = buildSync({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    write: false,
    logLevel: "silent",
    // What the sources read as import.meta.url (the package's folders are found from it): the entry's own.
    define: { "import.meta.url": JSON.stringify(entry.href) },
    // ws loads these native add-ons when they are installed and works without them.
    external: ["bufferutil", "utf-8-validate"],
  });
  const text = outputFiles[0]!.text;
  bundles.set(entry.href, text);
  return text;
}
