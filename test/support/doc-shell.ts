import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { inject } from "vitest";
import type { CliResult } from "./cli.js";
import type { Cleanups } from "./cleanups.js";

/**
 * The documentation's shell commands, run as a user runs them: in a client repository that has
 * tau-gateway installed (node_modules/tau-gateway, the package this test run built, with its
 * `node_modules/.bin/tau-gateway`, which `npx tau-gateway` finds and `tau-gateway` is on PATH for),
 * by bash, with a HOME of its own.
 */

export interface ClientRepository {
  /** The repository's folder: the commands' working directory. */
  dir: string;
  /** The commands' environment: HOME in the folder, node_modules/.bin first on PATH. */
  env: NodeJS.ProcessEnv;
}

/** A fresh client repository with the built package installed; removed after the test. */
export function clientRepository(cleanups: Cleanups): ClientRepository {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-docs-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const packageRoot = dirname(dirname(inject("cliBundle")));
  mkdirSync(join(dir, "node_modules/.bin"), { recursive: true });
  mkdirSync(join(dir, "home"));
  symlinkSync(packageRoot, join(dir, "node_modules/tau-gateway"), "dir");
  symlinkSync("../tau-gateway/dist/tau-gateway.mjs", join(dir, "node_modules/.bin/tau-gateway"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "client", private: true, devDependencies: { "tau-gateway": "*" } }));
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: join(dir, "home"), PATH: `${join(dir, "node_modules/.bin")}:${process.env.PATH}`, npm_config_yes: "false", npm_config_offline: "true" };
  for (const name of Object.keys(env)) if (name.startsWith("TAU_GATEWAY_") || name.startsWith("OTEL_") || name === "VITEST" || name.startsWith("npm_lifecycle")) delete env[name];
  return { dir, env };
}

/** Runs SCRIPT with bash in the repository to completion, STDIN written to it and closed. */
export function runShell(repo: ClientRepository, script: string, stdin = "", env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd: repo.dir, env: { ...repo.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

export interface BackgroundShell {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of PATTERN in what it wrote to STREAM so far or later; rejects if it exits first. */
  waitFor(stream: "stdout" | "stderr", pattern: RegExp): Promise<RegExpExecArray>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts SCRIPT with bash in the repository, in a process group of its own (npx and npm put
 * processes of their own in between); whatever is left of the group is killed after the test.
 */
export function startShell(repo: ClientRepository, script: string, cleanups: Cleanups, env: NodeJS.ProcessEnv = {}): BackgroundShell {
  const child = spawn("bash", ["-c", script], { cwd: repo.dir, env: { ...repo.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  cleanups.push(async () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // The group has ended.
    }
    await exit;
  });
  const output = { stdout: "", stderr: "" };
  const waiters: Array<() => void> = [];
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream]!.setEncoding("utf8").on("data", (d: string) => {
      output[stream] += d;
      for (const waiter of [...waiters]) waiter();
    });
  }
  const waitFor = (stream: "stdout" | "stderr", pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output[stream]);
        if (match) {
          waiters.splice(waiters.indexOf(check), 1);
          resolve(match);
        }
      };
      waiters.push(check);
      check();
      void exit.then(({ code }) => reject(new Error(`${script} exited with ${code} before its ${stream} showed ${pattern}; stderr:\n${output.stderr}`)));
    });
  return { child, stdout: () => output.stdout, stderr: () => output.stderr, waitFor, exit };
}

/** Starts a gateway command line (startShell) and resolves with its address once it printed its listening line. */
export async function startGatewayShell(repo: ClientRepository, script: string, cleanups: Cleanups, env: NodeJS.ProcessEnv = {}): Promise<BackgroundShell & { baseUrl: string }> {
  const shell = startShell(repo, script, cleanups, env);
  const listening = await shell.waitFor("stderr", /tau-gateway listening on (http:\/\/\S+)/);
  return { ...shell, baseUrl: listening[1]! };
}
