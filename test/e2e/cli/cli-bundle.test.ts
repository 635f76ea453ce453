import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { outputAtExit, repoRoot, type CliResult } from "../../support/cli.js";
import { startLoopbackRedis } from "../../support/redis-server.js";

/**
 * The command users run is what `npm run build` and `npm run build:cli` write
 * (scripts/bundle-cli.mjs): dist/tau-gateway.mjs (`bin` in package.json), a launcher that runs the
 * bundle dist/tau-gateway.cjs with the code cache in dist/cli-cache/. The test run built it once
 * (test/setup/built-cli.ts) into a directory of its own laid out as an installed package
 * (package.json, schema/, generated/ and node_modules/ beside dist/): every command starts from it
 * and answers; what only some runs need is never run by the others.
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

/** Runs `node BUNDLE ARGS` with V8's coverage on until it is ready, stops it with SIGTERM and returns how often each function of dist/tau-gateway.cjs ran, by name. */
async function functionCountsOfAStart(args: string[], ready: (baseUrl: string) => Promise<void>): Promise<Map<string, number>> {
  const coverageDir = mkdtempSync(join(tmpdir(), "tau-gateway-coverage-"));
  cleanups.push(() => rmSync(coverageDir, { recursive: true, force: true }));
  const gateway = startBundle(args, { NODE_V8_COVERAGE: coverageDir });
  const [, baseUrl] = await stderrLine(gateway, /tau-gateway listening on (http:\/\/\S+)/);
  await ready(baseUrl!);
  gateway.child.kill("SIGTERM");
  expect(await gateway.exit).toBe(0);
  const counts = new Map<string, number>();
  for (const name of readdirSync(coverageDir)) {
    const { result } = JSON.parse(readFileSync(join(coverageDir, name), "utf8")) as { result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[] };
    for (const script of result.filter((s) => s.url.endsWith("/dist/tau-gateway.cjs"))) {
      for (const fn of script.functions) counts.set(fn.functionName, (counts.get(fn.functionName) ?? 0) + fn.ranges[0]!.count);
    }
  }
  return counts;
}

/** The module bodies (esbuild names each module's wrapper by its path) of `pkg` that ran. */
function modulesRun(counts: Map<string, number>, pkg: string): string[] {
  return [...counts].filter(([name, count]) => name.includes(`node_modules/${pkg}/`) && count > 0).map(([name]) => name);
}
function modulesOf(counts: Map<string, number>, pkg: string): string[] {
  return [...counts.keys()].filter((name) => name.includes(`node_modules/${pkg}/`));
}

describe("the command-line bundle", () => {
  it("is what bin names, a launcher running one bundle beside it, and prints the help", async () => {
    expect(bundle).toBe(join(root, bin));
    expect(bundle.endsWith(".mjs")).toBe(true);
    expect(existsSync(join(dirname(bundle), "tau-gateway.cjs"))).toBe(true);
    const help = await runToEnd(process.execPath, [bundle, "help"], { cwd: root });
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining("usage: tau-gateway <command>") });
  });

  it("is ASCII text, every bundle of it, which V8 keeps at one byte a character (comments' other characters made \"?\")", () => {
    for (const name of ["tau-gateway.cjs", "tau-gateway-validate.cjs", "validate-worker.cjs", "transcript-worker.cjs"]) {
      const text = readFileSync(join(dirname(bundle), name), "utf8");
      expect(text.length, name).toBeGreaterThan(10_000);
      expect(/[^\x00-\x7f]/.exec(text)?.index, name).toBeUndefined();
    }
  });

  it("comes with V8's code cache of the bundle, named by its SHA-256 as the launcher knows it, which a fresh process uses", async () => {
    const cjs = join(dirname(bundle), "tau-gateway.cjs");
    const sha256 = createHash("sha256").update(readFileSync(cjs)).digest("hex");
    expect(readFileSync(bundle, "utf8")).toContain(sha256);
    expect(readdirSync(join(dirname(bundle), "cli-cache"))).toEqual([`tau-gateway-${sha256}.v8cache`]);
    const probe = [
      `import { codeCachePath, compileCommonJs } from ${JSON.stringify(join(repoRoot, "src/cli/cached-script.ts"))};`,
      `const compiled = compileCommonJs(${JSON.stringify(cjs)}, codeCachePath(${JSON.stringify(join(dirname(bundle), "cli-cache"))}, ${JSON.stringify(sha256)}));`,
      "console.log(JSON.stringify({ cache: compiled.cache }));",
    ].join("\n");
    const loaded = await runToEnd(process.execPath, ["--import", "tsx", "--input-type=module", "-e", probe], { cwd: repoRoot });
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(JSON.parse(loaded.stdout)).toEqual({ cache: "used" });
  });

  it("validates a transcript, finding the schema above the bundle", async () => {
    const transcript = join(repoRoot, "test/fixtures/seed-000/examples-v13.jsonl");
    const lines = readFileSync(transcript, "utf8").trim().split("\n").length;
    const checked = await runToEnd(process.execPath, [bundle, "validate", "--tau-version", "13", transcript], { cwd: root });
    expect(checked.stdout, checked.stderr).toContain(`${lines} valid, 0 invalid`);
    expect(checked.code).toBe(0);
  });

  it("leaves ajv's compiler out of the bundle and requires it when a rejected message is first explained", async () => {
    // esbuild heads each module's code with a `// PATH` comment.
    const withAjv = (file: string) => /^\/\/ \S*node_modules\/ajv\//m.test(readFileSync(file, "utf8"));
    expect([bundle, join(dirname(bundle), "tau-gateway.cjs")].filter(withAjv)).toEqual([]);
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

  it("runs ioredis and OpenTelemetry only when they are used: serve without a Redis store or OTEL_* never runs their modules, with --store redis:// it does", async () => {
    const plain = await functionCountsOfAStart(["serve", "--port", "0"], readyzAndCreate);
    expect(modulesOf(plain, "ioredis").length, "ioredis is in the bundle").toBeGreaterThan(0);
    expect(modulesOf(plain, "@opentelemetry/sdk-trace-base").length, "the tracing SDK is in the bundle").toBeGreaterThan(0);
    expect(modulesRun(plain, "ioredis")).toEqual([]);
    expect(modulesRun(plain, "@opentelemetry/sdk-trace-base")).toEqual([]);

    const redis = await startLoopbackRedis(cleanups);
    const withRedis = await functionCountsOfAStart(["serve", "--port", "0", "--store", `${redis.url}/0`], readyzAndCreate);
    expect(modulesRun(withRedis, "ioredis").length).toBeGreaterThan(0);
  });

  it("loads the MCP SDK's transport only when an MCP client comes: a start that serves /mcp runs none of its modules until the first POST there", async () => {
    const plain = await functionCountsOfAStart(["serve", "--port", "0"], readyzAndCreate);
    expect(modulesOf(plain, "@modelcontextprotocol/sdk").length, "the MCP SDK is in the bundle").toBeGreaterThan(0);
    expect(modulesRun(plain, "@modelcontextprotocol/sdk")).toEqual([]);

    const withMcp = await functionCountsOfAStart(["serve", "--port", "0"], async (baseUrl) => {
      await readyzAndCreate(baseUrl);
      const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "1" } } };
      const answered = await fetch(`${baseUrl}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(initialize) });
      expect(answered.status).toBe(200);
      expect(answered.headers.get("mcp-session-id")).toEqual(expect.any(String));
      await answered.body?.cancel();
    });
    expect(modulesRun(withMcp, "@modelcontextprotocol/sdk").length).toBeGreaterThan(0);
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
