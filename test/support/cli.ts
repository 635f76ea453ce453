import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import { run } from "../../src/cli/run.js";
import type { Cleanups } from "./cleanups.js";

/**
 * `tau-gateway` in tests: in-process through the commands' injected I/O (the default: usage,
 * settings, validate, start-up failures), or as a real process (the bundle the test run built,
 * test/setup/built-cli.ts) where the process itself is under test: exit statuses, signals, what goes
 * to stdout and stderr.
 */

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const mainTs = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const GATEWAY_LISTENING = /^tau-gateway listening on (http:\/\/\S+)$/m;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `tau-gateway ARGV` in this process to completion, with `stdin` as its input and only `env`
 * as its environment. Only for runs that end by themselves: a command that starts serving waits
 * for a signal of the real process.
 */
export async function runCommand(argv: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const io = { stdin: Readable.from(options.stdin ? [options.stdin] : []), stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text) };
  const code = await run(argv, io, options.env ?? {});
  return { code, stdout, stderr };
}

/** Runs the real `tau-gateway ARGS` process to completion. */
export function runCliProcess(args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return outputAtExit(spawnCli(args, options.env), options.stdin);
}

/** What a child spawned with piped stdio writes until it ends, once `stdin` (default nothing) is written and closed. */
export function outputAtExit(child: ChildProcess, stdin = ""): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin!.end(stdin);
  });
}

export type ChildExit = { code: number | null; signal: NodeJS.Signals | null };

/** A real `tau-gateway` process a test owns: its stderr kept, killed after the test if it still runs. */
export interface OwnedCli {
  child: ChildProcess;
  exit: Promise<ChildExit>;
  /** Everything it wrote to stderr so far (empty when stderr is not piped). */
  stderr(): string;
  /** Kills it (SIGKILL) if it still runs, and waits for its exit. */
  stop(): Promise<void>;
}

/** Spawns `tau-gateway ARGS` (spawnCli) and registers its `stop()` with the test's cleanups. */
export function spawnOwnedCli(args: string[], cleanups: Cleanups, env: NodeJS.ProcessEnv = {}, stdio: StdioOptions = ["pipe", "pipe", "pipe"]): OwnedCli {
  const child = spawnCli(args, env, stdio);
  const exit = new Promise<ChildExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exit;
    }
  };
  cleanups.push(stop);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return { child, exit, stderr: () => stderr, stop };
}

export interface ListeningCli {
  child: ChildProcess;
  /** The first group of the listening line (the address). */
  address: string;
  stderr: () => string;
  exit: Promise<ChildExit>;
}

/**
 * Starts the real `tau-gateway ARGS` process and resolves once stderr shows `listening` (its
 * first group is the address); the process is killed after the test if it is still running then.
 */
export function startCliProcess(args: string[], listening: RegExp, cleanups: Cleanups, env: NodeJS.ProcessEnv = {}): Promise<ListeningCli> {
  const { child, exit, stderr } = spawnOwnedCli(args, cleanups, env, ["ignore", "ignore", "pipe"]);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not print its listening line in time; stderr:\n${stderr()}`)), 20_000);
    child.stderr!.on("data", () => {
      const match = listening.exec(stderr());
      if (match) {
        clearTimeout(timer);
        resolve({ child, address: match[1]!, stderr, exit });
      }
    });
    void exit.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited with ${code} before listening; stderr:\n${stderr()}`));
    });
  });
}

export interface ServingCli extends ListeningCli {
  /** http://HOST:PORT from the listening line. */
  baseUrl: string;
}

/** The real `tau-gateway serve ARGS` process, once it printed its listening line. */
export async function serveCli(args: string[], cleanups: Cleanups, env: NodeJS.ProcessEnv = {}): Promise<ServingCli> {
  const started = await startCliProcess(["serve", ...args], GATEWAY_LISTENING, cleanups, env);
  return { ...started, baseUrl: started.address };
}

/**
 * `node BUNDLE ARGS`: one process, so a signal sent to it reaches the command's own handlers. The
 * bundle is the one this test run built (test/setup/built-cli.ts, e2e project); outside a test run
 * (`npm run fuzz`) the sources run through tsx's loader, still in one process (the tsx launcher
 * would put a second process in between, relaying signals with a 30 ms grace a loaded machine misses).
 */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}, stdio: StdioOptions = ["pipe", "pipe", "pipe"], nodeFlags: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, ...cliEntry(), ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio });
}

/** What node runs as `tau-gateway`: the test run's bundle, or the sources through tsx outside a test run. */
function cliEntry(): string[] {
  if (!process.env.VITEST) return ["--import", "tsx", mainTs];
  const bundle = inject("cliBundle");
  if (!bundle) throw new Error("no command-line bundle for this test: tests that run tau-gateway as a process belong to the e2e project (vitest.config.ts)");
  return [bundle];
}
