import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { Cleanups } from "./cleanups.js";
import { freePort } from "./free-port.js";

export interface RunningRedis {
  port: number;
  /** redis://127.0.0.1:PORT */
  url: string;
  /** Sends one command (inline protocol) and resolves with the raw reply. */
  command(...args: string[]): Promise<string>;
  /** A new ioredis client of it (disconnected by stop()). */
  client(): Redis;
  stop(): Promise<void>;
}

/**
 * A real redis-server of its own on a free loopback port, in a temporary directory, with nothing
 * persisted; stop() kills it and removes the directory.
 */
export async function startRedis(): Promise<RunningRedis> {
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-redis-"));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn("/usr/bin/redis-server", ["--save", "", "--appendonly", "no", "--port", String(port), "--bind", "127.0.0.1", "--dir", dir], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (output += d));
    const ready = await waitForReady(child, () => output);
    if (ready) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      const clients: Redis[] = [];
      return {
        port,
        url: `redis://127.0.0.1:${port}`,
        command: (...args) => sendCommand(port, args),
        client: () => {
          const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 2 });
          clients.push(redis);
          return redis;
        },
        stop: async () => {
          for (const redis of clients) redis.disconnect();
          if (child.exitCode === null && child.signalCode === null) {
            child.kill("SIGKILL");
            await exited;
          }
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (attempt >= 3) throw new Error(`redis-server did not start:\n${output}`);
  }
}

/** A redis-server for one test, stopped by `cleanups`. */
export async function startLoopbackRedis(cleanups: Cleanups): Promise<RunningRedis> {
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  return redis;
}

function waitForReady(child: ChildProcess, output: () => string): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), 20_000);
    const check = () => {
      if (output().includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

function sendCommand(port: number, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    let reply = "";
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => {
      reply += d;
      if (reply.endsWith("\r\n")) socket.end();
    });
    socket.on("end", () => resolve(reply));
    socket.on("error", reject);
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`);
  });
}
