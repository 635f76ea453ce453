import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { Cleanups } from "./cleanups.js";
import { spawnOwnedCli, type ChildExit } from "./cli.js";

/**
 * A `tau-gateway ARGS` process spoken to as a client that spawned it: one JSON message per line
 * on its stdin, each stdout line handed to `onLine` (and kept), stderr kept for messages. Killed
 * after the test if it is still running.
 */
export interface LineChild {
  child: ChildProcess;
  /** Writes one line to its stdin. */
  write(line: string): void;
  /** Ends its stdin, as a client that is done does. */
  end(): void;
  /** Every stdout line so far, as written. */
  lines: string[];
  stderr(): string;
  exit: Promise<ChildExit>;
}

export function spawnLineChild(args: string[], cleanups: Cleanups, onLine: (line: string) => void, env: NodeJS.ProcessEnv = {}): LineChild {
  const { child, exit, stderr } = spawnOwnedCli(args, cleanups, env);
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line);
    onLine(line);
  });
  // Writing to a process that has exited fails with EPIPE; its exit is what the tests look at.
  child.stdin!.on("error", () => undefined);
  return {
    child,
    write: (line) => void child.stdin!.write(`${line}\n`),
    end: () => void child.stdin!.end(),
    lines,
    stderr,
    exit,
  };
}
