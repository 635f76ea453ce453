import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { AskTestClient } from "./ask-client.js";
import type { Cleanups } from "./cleanups.js";
import { spawnOwnedCli } from "./cli.js";

/**
 * `tau-gateway stdio` as a client spawns it: one node process running the command (spawnCli, so
 * signals sent to the child reach the command itself), an Ask client on
 * its stdin/stdout, every stdout line also kept raw. Killed after the test if still running.
 */
export interface StdioChild {
  child: ChildProcessWithoutNullStreams;
  /** The client on stdin/stdout (the latest one freshClient made). */
  readonly client: AskTestClient;
  /**
   * A new client on the same stdin/stdout that sees only the lines written from now on (stdio has
   * one connection per process; tests sharing a process each get their own view of it). Its ids
   * start at `firstId`, so a late answer to an earlier client's request is never taken for one of its own.
   */
  freshClient(options?: { jsonrpc?: boolean; firstId?: number }): AskTestClient;
  /** The default working directory of new sessions (--default-cwd, a fresh temporary directory). */
  cwd: string;
  /** Every line the command wrote to stdout, parsed. */
  lines: Array<Record<string, unknown>>;
  /** Lines that were not JSON (a process made to exit with its output backed up may leave half a line). */
  malformed: string[];
  stderr(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resident set size of the command's process in MiB (Linux: /proc), or undefined. */
  rssMiB(): number | undefined;
  /** Resolves once stdout has `count` lines. */
  waitForLines(count: number, timeoutMs?: number): Promise<void>;
}

export function spawnStdio(args: string[], cleanups: Cleanups, env: NodeJS.ProcessEnv = {}): StdioChild {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "ask-stdio-")));
  // Cleanups run newest first: the directory goes once the process that works in it is gone.
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const owned = spawnOwnedCli(["stdio", "--default-cwd", cwd, ...args], cleanups, env);
  const child = owned.child as ChildProcessWithoutNullStreams;
  const write = (line: string) => void child.stdin.write(`${line}\n`);
  let client = new AskTestClient(write);
  const lines: Array<Record<string, unknown>> = [];
  const malformed: string[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      malformed.push(line);
      return;
    }
    client.receive(line);
    for (const wake of [...waiters]) wake();
  });
  // Writing to a process that has exited fails with EPIPE; the exit is what the tests look at.
  child.stdin.on("error", () => undefined);
  return {
    child,
    get client() {
      return client;
    },
    freshClient(options = {}) {
      client = new AskTestClient(write, options);
      return client;
    },
    cwd,
    lines,
    malformed,
    stderr: owned.stderr,
    exit: owned.exit,
    rssMiB() {
      try {
        const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
        return kib === undefined ? undefined : Number(kib) / 1024;
      } catch {
        return undefined;
      }
    },
    waitForLines(count, timeoutMs = 60_000) {
      if (lines.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (lines.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${count} stdout lines (got ${lines.length}); stderr:\n${owned.stderr().slice(-2000)}`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
  };
}

/** Resolves with the exit, or with "still running" after `ms`. */
export function exitWithin(exit: StdioChild["exit"], ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | "still running"> {
  return Promise.race([exit, new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), ms))]);
}
