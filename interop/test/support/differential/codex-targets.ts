import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { CodexTestClient } from "../../../../test/support/codex-client.js";
import { interopRoot } from "../gateway-process.js";
import { startMockResponses, type MockResponses } from "./mock-responses.js";

/**
 * The two kinds of Codex app-server the differential harness drives with the same client code:
 * a real `codex app-server` (a given binary, on a loopback mock of the Responses API) and
 * `tau-gateway app-server` (the built dist/tau-gateway.mjs) in front of its embedded host. Each
 * connection is a process of its own on stdio, as clients spawn them; connections of one target
 * share what a real server keeps between processes (CODEX_HOME for Codex, the Tau host for the
 * gateway), so a thread started on one can be resumed on another.
 */

export interface Connection {
  client: CodexTestClient;
  /** Every message both ways, in the order it was written or read. */
  log: Array<{ direction: "in" | "out"; message: Record<string, any> }>;
  /** Ends the process (stdin closed, then SIGKILL if it lingers); resolves once it exited. */
  close(): Promise<void>;
  stderr(): string;
}

export interface CodexTarget {
  /** What the report calls it: "tau-gateway", "codex 0.169.0", … */
  name: string;
  /** The working directory threads are started in (a fresh directory of the run). */
  cwd: string;
  /** A second directory, for `cwd` filters. */
  otherCwd: string;
  connect(): Promise<Connection>;
  close(): Promise<void>;
}

const repoRoot = join(interopRoot, "..");
export const TAU_GATEWAY_BUNDLE = join(repoRoot, "dist", "tau-gateway.mjs");

function runDir(prefix: string): { dir: string; cwd: string; otherCwd: string; home: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const paths = { dir, cwd: join(dir, "work"), otherCwd: join(dir, "elsewhere"), home: join(dir, "home") };
  for (const path of [paths.cwd, paths.otherCwd, paths.home]) mkdirSync(path, { recursive: true });
  return paths;
}

/** A spawned app-server speaking newline-delimited JSON on stdio, with a test client on it. */
function lineConnection(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Connection {
  const child: ChildProcess = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin!.on("error", () => undefined);
  const log: Connection["log"] = [];
  const client = new CodexTestClient((line) => {
    log.push({ direction: "out", message: JSON.parse(line) });
    child.stdin!.write(`${line}\n`);
  });
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.trim()) return;
    log.push({ direction: "in", message: JSON.parse(line) });
    client.receive(line);
  });
  return {
    client,
    log,
    stderr: () => stderr,
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin!.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The release of an installed @openai/codex package: its version and its platform package's native executable. */
export function codexRelease(packageDir: string): CodexRelease {
  const require = createRequire(join(packageDir, "package.json"));
  const version = (JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string }).version;
  const platform = require.resolve("@openai/codex-linux-x64/package.json");
  const binary = join(dirname(platform), "vendor", "x86_64-unknown-linux-musl", "bin", "codex");
  if (!existsSync(binary)) throw new Error(`no codex executable in ${packageDir} (looked for ${binary})`);
  return { version, binary };
}

export interface CodexRelease {
  /** "0.169.0" */
  version: string;
  /** The native codex executable. */
  binary: string;
}

/**
 * The releases of Codex installed in interop/: the pinned @openai/codex, and the newest one when
 * the `codex-newest` alias (npm:@openai/codex@…) is installed. TAU_DIFF_CODEX=/path/to/codex
 * (optionally with TAU_DIFF_CODEX_VERSION) adds another executable.
 */
export function installedCodexReleases(): CodexRelease[] {
  const releases: CodexRelease[] = [];
  for (const name of ["@openai/codex", "codex-newest"]) {
    const dir = join(interopRoot, "node_modules", name);
    if (!existsSync(join(dir, "package.json"))) continue;
    const release = codexRelease(dir);
    if (!releases.some((r) => r.version === release.version)) releases.push(release);
  }
  const extra = process.env.TAU_DIFF_CODEX;
  if (extra) releases.push({ binary: extra, version: process.env.TAU_DIFF_CODEX_VERSION ?? "custom" });
  return releases;
}

/** The CODEX_HOME config of a real app-server on the mock model. */
export function codexHome(home: string, mock: MockResponses): void {
  writeFileSync(
    join(home, "config.toml"),
    [
      'model = "gpt-5.5"',
      'model_provider = "mock"',
      "check_for_update_on_startup = false",
      "",
      "[model_providers.mock]",
      'name = "Mock"',
      `base_url = "${mock.baseUrl}"`,
      'wire_api = "responses"',
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "",
      // The scripted agent's ask_user works in every mode; Codex offers request_user_input
      // outside Plan mode only with this feature.
      "[features]",
      "default_mode_request_user_input = true",
      "",
    ].join("\n"),
  );
}

/** A real `codex app-server` of `release` on a fresh mock model and CODEX_HOME. */
export async function codexTarget(release: CodexRelease): Promise<CodexTarget & { mock: MockResponses; home: string }> {
  const paths = runDir("tau-diff-codex-");
  const mock = await startMockResponses();
  codexHome(paths.home, mock);
  const env = { ...process.env, CODEX_HOME: paths.home, HOME: paths.home, RUST_LOG: "error" };
  return {
    name: `codex ${release.version}`,
    cwd: paths.cwd,
    otherCwd: paths.otherCwd,
    mock,
    home: paths.home,
    connect: async () => lineConnection(release.binary, ["app-server"], { cwd: paths.cwd, env }),
    close: async () => {
      await mock.close();
      rmSync(paths.dir, { recursive: true, force: true });
    },
  };
}

/** Resolves with the first group of `pattern` once `child`'s stderr shows it. */
function printed(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match) resolve(match[1]!);
    });
    child.once("exit", () => reject(new Error(`exited before printing ${pattern}:\n${text}`)));
  });
}

/**
 * `tau-gateway app-server` processes (the built bundle) in front of one `tau-gateway host`: the
 * embedded reference host with its scripted agent, and the command tool `echo-args` (prints its
 * JSON arguments), which asks for approval as Codex's escalated commands do.
 */
export async function tauTarget(): Promise<CodexTarget> {
  if (!existsSync(TAU_GATEWAY_BUNDLE)) throw new Error(`${TAU_GATEWAY_BUNDLE} is missing: run npm run build:cli first`);
  const paths = runDir("tau-diff-gateway-");
  const toolsFile = join(paths.dir, "tools.json");
  writeFileSync(toolsFile, JSON.stringify({ tools: [{ name: "echo-args", description: "Prints the JSON arguments it was given.", parameters: { type: "object" }, command: "cat" }] }));
  const hostEnv = { ...process.env, HOME: paths.home };
  const host = spawn(process.execPath, [TAU_GATEWAY_BUNDLE, "host", "--port", "0"], { cwd: paths.cwd, env: hostEnv, stdio: ["ignore", "ignore", "pipe"] });
  const hostExited = new Promise<void>((resolve) => host.once("exit", () => resolve()));
  const url = await printed(host, /tau host listening on (ws:\/\/\S+)/);
  const env = {
    ...process.env,
    HOME: paths.home,
    TAU_GATEWAY_UPSTREAM: url,
    TAU_GATEWAY_TOOLS_CONFIG: toolsFile,
    TAU_GATEWAY_DEFAULT_CWD: paths.cwd,
    TAU_GATEWAY_INTERACTION_TIMEOUT_MS: "60000",
  };
  return {
    name: "tau-gateway",
    cwd: paths.cwd,
    otherCwd: paths.otherCwd,
    connect: async () => lineConnection(process.execPath, [TAU_GATEWAY_BUNDLE, "app-server"], { cwd: paths.cwd, env }),
    close: async () => {
      host.kill("SIGTERM");
      await hostExited;
      rmSync(paths.dir, { recursive: true, force: true });
    },
  };
}
