import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";

/** A real redis-server of its own on loopback, without persistence, for one test file. */
export interface RunningRedis {
  readonly port: number;
  readonly url: string;
  /** A new client of it (closed by stop()). */
  client(): Redis;
  stop(): Promise<void>;
}

const REDIS_SERVER = process.env.REDIS_SERVER ?? "/usr/bin/redis-server";

export async function startRedis(): Promise<RunningRedis> {
  const dir = mkdtempSync(join(tmpdir(), "redis-"));
  const port = await freePort();
  const child: ChildProcess = spawn(REDIS_SERVER, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const clients: Redis[] = [];
  const client = () => {
    const c = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 2 });
    clients.push(c);
    return c;
  };
  for (let attempt = 0; ; attempt++) {
    const probe = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => undefined); // refused while the server starts: the loop tries again
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch (error) {
      probe.disconnect();
      if (attempt >= 100 || child.exitCode !== null) {
        child.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`redis-server did not start on port ${port}: ${String(error)}\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    client,
    async stop() {
      for (const c of clients) c.disconnect();
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
