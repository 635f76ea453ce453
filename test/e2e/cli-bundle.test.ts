import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { outputAtExit, repoRoot, type CliResult } from "../support/cli.js";
import { startLoopbackRedis } from "../support/redis-server.js";

/**
 * The command users run is the bundle `npm run build` and `npm run build:cli` write
 * (scripts/bundle-cli.mjs; dist/tau-gateway.mjs, `bin` in package.json). The test run built it once
 * (test/setup/built-cli.ts) into a directory of its own laid out as an installed package
 * (package.json, schema/, generated/ and node_modules/ beside dist/): every command starts from it
 * and answers; what only some runs need stays out of the start-up path.
 */

const cleanups = cleanupsAfterEach();
const bundle = inject("cliBundle");
const root = dirname(dirname(bundle));
const bin = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { bin: Record<string, string> }).bin["tau-gateway"]!;

function runToEnd(command: string, args: string[], options: { cwd: string; stdin?: string }): Promise<CliResult> {
  return outputAtExit(spawn(command, args, { cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] }), options.stdin);
}

/** `node BUNDLE ARGS`, killed after the test if still running. */
function startBundle(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; exit: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [bundle, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exit;
    }
  });
  return { child, exit, stderr: () => stderr };
}

async function stderrLine(started: ReturnType<typeof startBundle>, pattern: RegExp): Promise<RegExpExecArray> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    const match = pattern.exec(started.stderr());
    if (match) return match;
    if (started.child.exitCode !== null) break;
  }
  throw new Error(`no ${pattern} on stderr; stderr:\n${started.stderr()}`);
}

/** Writes one JSON-RPC request to a stdio command and resolves with the first line it answers. */
function firstAnswer(started: ReturnType<typeof startBundle>, request: object): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    started.child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      const end = stdout.indexOf("\n");
      if (end >= 0) resolve(JSON.parse(stdout.slice(0, end)));
    });
    void started.exit.then((code) => reject(new Error(`exited with ${code}; stderr:\n${started.stderr()}`)));
    started.child.stdin!.write(`${JSON.stringify(request)}\n`);
  });
}

async function readyzAndCreate(baseUrl: string): Promise<void> {
  for (let status = 0; status !== 200; await new Promise((r) => setTimeout(r, 20))) status = (await fetch(`${baseUrl}/readyz`)).status;
  const created = await fetch(`${baseUrl}/rpc`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: {} }) });
  expect(await created.json()).toMatchObject({ id: 1, result: { session: { sessionId: expect.any(String) } } });
}

/** The chunks a module loads before running (its static imports, transitively): dynamic `import()`s excluded. */
function staticClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const match of readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*"(\.[^"]+)"|^import\s*"(\.[^"]+)"/gm)) {
    staticClosure(join(dirname(file), match[1] ?? match[2]!), seen);
  }
  return seen;
}

describe("the command-line bundle", () => {
  it("is what bin names, one file plus lazily loaded chunks, and prints the help", async () => {
    expect(bundle).toBe(join(root, bin));
    expect(bundle.endsWith(".mjs")).toBe(true);
    const help = await runToEnd(process.execPath, [bundle, "help"], { cwd: root });
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining("usage: tau-gateway <command>") });
  });

  it("validates a transcript, finding the schema above the bundle", async () => {
    const transcript = join(repoRoot, "test/fixtures/seed-000/examples-v13.jsonl");
    const lines = readFileSync(transcript, "utf8").trim().split("\n").length;
    const checked = await runToEnd(process.execPath, [bundle, "validate", "--tau-version", "13", transcript], { cwd: root });
    expect(checked.stdout, checked.stderr).toContain(`${lines} valid, 0 invalid`);
    expect(checked.code).toBe(0);
  });

  it("leaves ajv's compiler out of the bundle and requires it when a rejected message is first explained", async () => {
    const chunks = readdirSync(join(dirname(bundle), "chunks")).filter((name) => name.endsWith(".mjs"));
    const withAjv = (file: string) => /^\/\/ \S*node_modules\/ajv\//m.test(readFileSync(file, "utf8"));
    expect([bundle, ...chunks.map((name) => join(dirname(bundle), "chunks", name))].filter(withAjv)).toEqual([]);
    // A request whose params break the schema: the detailed tier compiles its check to say why.
    const line = JSON.stringify({ direction: "client", message: { version: 18, type: "request", id: "r1", method: "session.submit", params: { sessionId: "s", text: 42 } } });
    const checked = await runToEnd(process.execPath, [bundle, "validate", "-"], { cwd: root, stdin: `${line}\n` });
    expect(checked.stdout, checked.stderr).toContain("tau session.submit: /params/text: must be of type string");
    expect(checked.stdout).toContain("0 valid, 1 invalid");
    expect(checked.code).toBe(1);
  });

  it("comes with V8 code caches of the precompiled validators, one per module, which the gateway's loader uses", async () => {
    const modules = readdirSync(join(repoRoot, "generated/validators")).filter((name) => name.endsWith(".cjs"));
    const caches = readdirSync(join(root, "dist/validator-cache"));
    expect(caches.map((name) => name.replace(/-[0-9a-f]{64}\.v8cache$/, ".cjs")).sort()).toEqual(modules.sort());
    // In a fresh process, as a gateway starting (within one process V8 never reads a cache again).
    const probe = [
      `import { loadWithCodeCache } from ${JSON.stringify(join(repoRoot, "src/validation/code-cache.ts"))};`,
      `import { validatorCacheDir } from ${JSON.stringify(join(repoRoot, "src/validation/precompiled.ts"))};`,
      `const { exports, cache } = loadWithCodeCache(${JSON.stringify(join(root, "generated/validators/tau-v18.cjs"))}, validatorCacheDir(${JSON.stringify(join(root, "dist"))}));`,
      "console.log(JSON.stringify({ cache, checks: Object.keys(exports).length }));",
    ].join("\n");
    const loaded = await runToEnd(process.execPath, ["--import", "tsx", "--input-type=module", "-e", probe], { cwd: repoRoot });
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(JSON.parse(loaded.stdout)).toEqual({ cache: "used", checks: expect.any(Number) });
  });

  it("serves with the embedded host: listening, /readyz 200, an Ask call, exit 0 on SIGTERM", async () => {
    const gateway = startBundle(["serve", "--port", "0"]);
    const [, baseUrl] = await stderrLine(gateway, /tau-gateway listening on (http:\/\/\S+)/);
    await readyzAndCreate(baseUrl!);
    gateway.child.kill("SIGTERM");
    expect(await gateway.exit).toBe(0);
  });

  it("loads ioredis only for a Redis store: not reachable from serve's static imports, and serve with --store redis:// works", async () => {
    const entry = readFileSync(bundle, "utf8");
    const serveChunk = /import\("(\.\/chunks\/serve-[^"]+\.mjs)"\)/.exec(entry)?.[1];
    expect(serveChunk, "serve is loaded lazily from its own chunk").toBeDefined();
    const loadedForServe = [...staticClosure(bundle), ...staticClosure(join(dirname(bundle), serveChunk!))];
    // esbuild heads each module's code with a `// PATH` comment.
    const withIoredis = (file: string) => /^\/\/ \S*node_modules\/ioredis\//m.test(readFileSync(file, "utf8"));
    expect(loadedForServe.filter(withIoredis)).toEqual([]);
    const chunks = readdirSync(join(dirname(bundle), "chunks")).filter((name) => name.endsWith(".mjs"));
    expect(chunks.filter((name) => withIoredis(join(dirname(bundle), "chunks", name))).length, "ioredis is in a chunk of its own").toBe(1);

    const redis = await startLoopbackRedis(cleanups);
    const gateway = startBundle(["serve", "--port", "0", "--store", `${redis.url}/0`]);
    const [, baseUrl] = await stderrLine(gateway, /tau-gateway listening on (http:\/\/\S+)/);
    await readyzAndCreate(baseUrl!);
  });

  it("runs the embedded host alone", async () => {
    const host = startBundle(["host", "--port", "0"]);
    await stderrLine(host, /tau host listening on ws:\/\/\S+/);
  });

  it("answers on stdio in each dialect: Ask (stdio), Codex (app-server), ACP (acp)", async () => {
    const cwd = root;
    const ask = startBundle(["stdio", "--default-cwd", cwd]);
    expect(await firstAnswer(ask, { jsonrpc: "2.0", id: 1, method: "session/create", params: {} })).toMatchObject({ id: 1, result: { session: { sessionId: expect.any(String) } } });
    const codex = startBundle(["app-server"]);
    expect(await firstAnswer(codex, { id: 1, method: "initialize", params: { clientInfo: { name: "test", version: "1" } } })).toMatchObject({ id: 1, result: { userAgent: expect.stringMatching(/^tau-gateway\/\d/) } });
    const acp = startBundle(["acp"]);
    expect(await firstAnswer(acp, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })).toMatchObject({ id: 1, result: { protocolVersion: 1 } });
  });
});
