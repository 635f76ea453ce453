import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { BridgeStack } from "../src/cli/bridge-stack.js";
import { buildGateway } from "../src/gateway/app.js";
import { InspectorHub } from "../src/gateway/inspector/inspector-hub.js";
import { DEFAULT_MAX_TRANSCRIPT_BYTES } from "../src/gateway/inspector/transcript-route.js";
import type { HostileClientMessage, HostileClientSettings } from "./hostile-client.js";
import { round } from "./stats.js";

/**
 * The worst event-loop stall of a gateway under each hostile input of issue 40, with the default
 * limits: the gateway (embedded host, every dialect, the inspector) runs in this process, and
 * perf_hooks' event-loop-delay monitor records the longest its loop was held while the input was
 * sent and answered. The hostile client runs in a worker thread (hostile-client.ts), so its own
 * building, sending and reading are not counted. Target: 100 ms each.
 */

export interface HostileResult {
  input: string;
  /** What the gateway answered, in short. */
  outcome: string;
  worstStallMs: number;
}

export const HOSTILE_STALL_TARGET_MS = 100;

const RESOLUTION_MS = 5;

/**
 * The monitor of one input, armed: its timer records nothing until it has fired once, so a stall
 * that began before then would go unseen; it is given a few periods before the input is sent
 * (and not reset after them, which would disarm it again).
 */
async function armedMonitor(): Promise<IntervalHistogram> {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 4 * RESOLUTION_MS));
  return histogram;
}

/** Starts the hostile client's worker: through tsx's loader, as the bench runs from source. */
function hostileClient(settings: HostileClientSettings): Worker {
  const url = new URL("./hostile-client.ts", import.meta.url);
  const source = `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(source, { eval: true, workerData: settings });
}

/**
 * The worker's messages in the order they came, each taken by one call of the function returned.
 * A Worker emits a message as it arrives and keeps none for a listener added later: the client's
 * `done` follows its last outcome at once, while the loop below still waits for the monitor to see
 * the end of that input, so listening once per message lost it now and then and the bench hung.
 */
function inbox(worker: Worker): () => Promise<HostileClientMessage> {
  const arrived: HostileClientMessage[] = [];
  const waiting: Array<{ resolve: (message: HostileClientMessage) => void; reject: (error: Error) => void }> = [];
  let failure: Error | undefined;
  worker.on("message", (message: HostileClientMessage) => {
    const taker = waiting.shift();
    if (taker) taker.resolve(message);
    else arrived.push(message);
  });
  const fail = (error: Error) => {
    failure ??= error;
    for (const taker of waiting.splice(0)) taker.reject(error);
  };
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the hostile client exited (${code}) before saying it was done`)));
  return () => {
    const message = arrived.shift();
    if (message) return Promise.resolve(message);
    if (failure) return Promise.reject(failure);
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
}

export async function measureHostileInputs(log: (line: string) => void): Promise<HostileResult[]> {
  const cwd = mkdtempSync(join(tmpdir(), "bench-hostile-"));
  const stack = new BridgeStack();
  await stack.start({ upstream: "embedded", defaultCwd: cwd, eventRetention: 1000, interactionTimeoutMs: 300_000 }, [], () => undefined);
  const app = buildGateway({
    tauUpstream: { url: stack.url! },
    upstream: stack.upstream!,
    dialects: stack.gatewayDialects({ jsonrpcMember: "include" }),
    inspector: { hub: new InspectorHub(), listenHost: "127.0.0.1", sessions: stack.core!.sessions },
  });
  const results: HostileResult[] = [];
  let client: Worker | undefined;
  try {
    const baseUrl = await app.listen({ host: "127.0.0.1", port: 0 });
    client = hostileClient({ baseUrl, cwd, maxTranscriptBytes: DEFAULT_MAX_TRANSCRIPT_BYTES });
    const next = inbox(client);
    for (let message = await next(); !("done" in message); message = await next()) {
      if ("failed" in message) throw new Error(`the hostile client failed: ${message.failed}`);
      if (!("ready" in message)) throw new Error(`the hostile client sent ${JSON.stringify(message)} out of turn`);
      const input = message.ready;
      log(`hostile: ${input}`);
      const histogram = await armedMonitor();
      const answered = next();
      client.postMessage("go");
      const answer = await answered;
      if (!("outcome" in answer)) throw new Error(`the hostile client sent ${JSON.stringify(answer)} instead of an outcome`);
      // A stall that ends the input is seen once the monitor's timer fires after it.
      await new Promise((resolve) => setTimeout(resolve, 4 * RESOLUTION_MS));
      histogram.disable();
      results.push({ input, outcome: answer.outcome, worstStallMs: round(histogram.max / 1e6, 0) });
    }
  } finally {
    await client?.terminate();
    await app.close().catch(() => undefined);
    await stack.close();
    rmSync(cwd, { recursive: true, force: true });
  }
  return results;
}
