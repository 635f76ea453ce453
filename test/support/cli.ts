import { spawn, type ChildProcess } from "node:child_process";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { runServe } from "../../src/cli/serve.js";
import type { Cleanups } from "./cleanups.js";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const tsxCli = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url));
const mainTs = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const LISTENING = /^tau-gateway listening on (http:\/\/\S+)$/m;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `tau-gateway` command (from source, through tsx) to completion. */
export function runCli(args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsxCli, mainTs, ...args], { cwd: repoRoot, env: { ...process.env, ...options.env } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

export interface ServingCli {
  child: ChildProcess;
  /** http://HOST:PORT from the listening line. */
  baseUrl: string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `tau-gateway serve ARGS` (from source, through tsx) and resolves once it printed its
 * listening line; the process is killed after the test if it is still running by then.
 */
export function serveCli(args: string[], cleanups: Cleanups, env: NodeJS.ProcessEnv = {}): Promise<ServingCli> {
  const child = spawn(process.execPath, [tsxCli, mainTs, "serve", ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exit;
    }
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not print its listening line in time; stderr:\n${stderr}`)), 20_000);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const match = LISTENING.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve({ child, baseUrl: match[1]!, stderr: () => stderr, exit });
      }
    });
    void exit.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening; stderr:\n${stderr}`));
    });
  });
}

/**
 * Runs `tau-gateway serve ARGV` in this process with no stdin and stdout discarded. Only for
 * settings that are refused before anything starts: a valid configuration would keep serving.
 */
export async function runServeInProcess(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const code = await runServe(argv, { stdin: Readable.from([]), stdout: () => undefined, stderr: (text: string) => void (stderr += text) }, env);
  return { code, stderr };
}
