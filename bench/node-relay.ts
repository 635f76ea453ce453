import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * bench/node-relay-server.mjs as a separate process: a WebSocket relay in Node.js that does
 * nothing but pass frames on. Beside nginx (a relay in C), it is the floor for any relay built on
 * Node.js and `ws`: what the gateway costs above it is parsing, validation and its own rules.
 */

export interface RunningNodeRelay {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const serverFile = fileURLToPath(new URL("./node-relay-server.mjs", import.meta.url));

/** `nodeFlags`: options for `node` itself (e.g. `--cpu-prof` from bench/profile.ts). */
export function startNodeRelay(upstreamUrl: string, nodeFlags: string[] = []): Promise<RunningNodeRelay> {
  const child = spawn(process.execPath, [...nodeFlags, serverFile, upstreamUrl], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NODE_ENV: "production" } });
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    let stderr = "";
    const timer = setTimeout(() => fail(new Error("the Node.js relay did not start within 10 s")), 10_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${err.message}${stderr ? `: ${stderr.trim()}` : ""}`));
    };
    const exitedEarly = (code: number | null) => fail(new Error(`the Node.js relay exited with ${code}`));
    child.once("exit", exitedEarly);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const match = /node relay listening on (ws:\/\/\S+)/.exec(stderr);
      if (!match) return;
      clearTimeout(timer);
      child.off("exit", exitedEarly);
      resolve({
        url: match[1]!,
        pid: child.pid!,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill("SIGTERM");
          await gone;
        },
      });
    });
  });
}
