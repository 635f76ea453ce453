import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

/**
 * A redis-server of the benchmark's own on a free loopback port, nothing persisted, its files in a
 * temporary directory: the store gateway replicas share (`serve --store redis://…`).
 */

export interface RunningRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The redis-server binary on PATH, or undefined (the replica rows are then skipped with a note). */
export function findRedis(): string | undefined {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function startRedis(binary: string): Promise<RunningRedis> {
  const dir = mkdtempSync(join(tmpdir(), "tau-bench-redis-"));
  const port = await freePort();
  const child = spawn(binary, ["--save", "", "--appendonly", "no", "--port", String(port), "--bind", "127.0.0.1", "--dir", dir], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 15_000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      output += d;
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.stderr.resume();
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  const stop = async () => {
    if (!exited) {
      child.kill("SIGKILL");
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  if (!ready) {
    await stop();
    throw new Error(`redis-server did not start: ${output.trim().split("\n").slice(-5).join(" / ") || "no output"}`);
  }
  return { url: `redis://127.0.0.1:${port}`, pid: child.pid!, stop };
}
