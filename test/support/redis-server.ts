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
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT): what was sent meanwhile is answered. */
  resume(): void;
  /** Kills the server (SIGKILL), losing everything it held; resolves once it exited. */
  kill(): Promise<void>;
  /** Starts a new, empty server on the same port (killing the running one first); resolves once it accepts connections. */
  restart(): Promise<void>;
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
    let server = await spawnRedis(port, dir);
    if ("child" in server) {
      const clients: Redis[] = [];
      const kill = async () => {
        const { child, exited } = server as RedisProcess;
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGKILL");
          await exited;
        }
      };
      return {
        port,
        url: `redis://127.0.0.1:${port}`,
        command: (...args) => sendCommand(port, args),
        client: () => {
          const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 2 });
          clients.push(redis);
          return redis;
        },
        pause: () => void (server as RedisProcess).child.kill("SIGSTOP"),
        resume: () => void (server as RedisProcess).child.kill("SIGCONT"),
        kill,
        restart: async () => {
          await kill();
          // The port was ours a moment ago; another process may take it meanwhile, so a few tries.
          for (let retry = 0; ; retry++) {
            server = await spawnRedis(port, dir);
            if ("child" in server) return;
            if (retry >= 20) throw new Error(`redis-server did not start again on port ${port}:\n${server.output}`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        },
        stop: async () => {
          for (const redis of clients) redis.disconnect();
          await kill();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (attempt >= 3) throw new Error(`redis-server did not start:\n${server.output}`);
  }
}

interface RedisProcess {
  child: ChildProcess;
  exited: Promise<void>;
}

/** A redis-server on `port`, persisting nothing; its process once ready, or what it printed if it did not start. */
async function spawnRedis(port: number, dir: string): Promise<RedisProcess | { output: string }> {
  const child = spawn("/usr/bin/redis-server", ["--save", "", "--appendonly", "no", "--port", String(port), "--bind", "127.0.0.1", "--dir", dir], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (output += d));
  return (await waitForReady(child, () => output)) ? { child, exited } : { output };
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
