import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { Cleanups } from "./cleanups.js";
import { freePort } from "./free-port.js";

/**
 * A real `redis-server` on a free loopback port, without persistence, in a temporary directory;
 * killed (and its directory removed) after the test. Resolves once it answers PING.
 */
export async function startLoopbackRedis(cleanups: Cleanups): Promise<{ url: string; port: number; client(): Redis }> {
  const dir = mkdtempSync(join(tmpdir(), "tau-gateway-redis-"));
  const port = await freePort();
  const child = spawn("redis-server", ["--save", "", "--appendonly", "no", "--port", String(port), "--bind", "127.0.0.1", "--dir", dir], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });
  const clients: Redis[] = [];
  cleanups.push(() => Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect()))));
  const client = () => {
    const redis = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 2 });
    clients.push(redis);
    return redis;
  };
  const probe = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // Refused while the server starts: the loop below retries, so the client's error events say nothing.
  probe.on("error", () => undefined);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await probe.connect();
        await probe.ping();
        break;
      } catch (error) {
        if (attempt >= 100) throw new Error(`redis-server on port ${port} did not answer: ${String(error)}`);
        probe.disconnect();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  } finally {
    probe.disconnect();
  }
  return { url: `redis://127.0.0.1:${port}`, port, client };
}
