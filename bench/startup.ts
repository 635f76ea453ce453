import { get } from "node:http";
import { cpuMs } from "./cpu.js";
import { startProcess } from "./processes.js";
import { GATEWAY_READY, type GatewayAuth } from "./stack.js";
import { median, now, round, sleep } from "./stats.js";

/**
 * Startup: from spawning `tau-gateway serve` (embedded upstream, the out-of-the-box default) to its
 * first `/readyz` 200, polled every 5 ms; also the time to the "listening" line, and the CPU the
 * gateway process used until then (steadier than the time on a busy machine). Median of `runs`.
 */

export interface StartupResult {
  runs: number;
  listeningMs: number;
  readyMs: number;
  readyRunsMs: number[];
  /** User + system CPU of the gateway process from its start to the first /readyz 200 (median). */
  cpuMs?: number;
}

export async function measureStartup(runs: number, auth: GatewayAuth): Promise<StartupResult> {
  const listening: number[] = [];
  const ready: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const began = now();
    const gateway = await startProcess("tau-gateway serve (embedded)", {
      args: ["serve", "--port", "0"],
      env: { ...auth.env, NODE_ENV: "production" },
      ready: GATEWAY_READY,
    });
    try {
      listening.push(gateway.startMs);
      const url = `${gateway.match[1]}/readyz`;
      const deadline = began + 30_000;
      while ((await status(url, auth.headers)) !== 200) {
        if (now() > deadline) throw new Error(`/readyz not 200 within 30 s\n${gateway.stderrTail()}`);
        await sleep(5);
      }
      ready.push(now() - began);
      cpu.push(cpuMs([gateway.pid]));
    } finally {
      await gateway.stop();
    }
  }
  return { runs, listeningMs: round(median(listening), 0), readyMs: round(median(ready), 0), readyRunsMs: ready.map((ms) => round(ms, 0)), cpuMs: round(median(cpu), 0) };
}

function status(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const request = get(url, { headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", () => resolve(0));
  });
}
