import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import WebSocket from "ws";
import { BridgeStack } from "../src/cli/bridge-stack.js";
import { buildGateway } from "../src/gateway/app.js";
import { InspectorHub } from "../src/gateway/inspector/inspector-hub.js";
import { DEFAULT_MAX_TRANSCRIPT_BYTES } from "../src/gateway/inspector/transcript-route.js";
import { round } from "./stats.js";

/**
 * The worst event-loop stall of a gateway under each hostile input of issue 40, with the default
 * limits: the gateway (embedded host, every dialect, the inspector) runs in this process, and
 * perf_hooks' event-loop-delay monitor records the longest the loop was held while the input was
 * sent and answered. The hostile client shares the loop, so its own sending and reading count
 * too: the figures are upper bounds. Target: 100 ms each.
 */

export interface HostileResult {
  input: string;
  /** What the gateway answered, in short. */
  outcome: string;
  worstStallMs: number;
}

export const HOSTILE_STALL_TARGET_MS = 100;

/** A Codex client on WebSocket `/` speaking plain JSON-RPC. */
class CodexSocket {
  private nextId = 1;
  private readonly waiting = new Map<number, (message: any) => void>();
  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (typeof message.id === "number" && ("result" in message || "error" in message)) this.waiting.get(message.id)?.(message);
    });
  }
  static async open(url: string): Promise<CodexSocket> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const client = new CodexSocket(socket);
    await client.request("initialize", { clientInfo: { name: "bench-hostile", version: "1" }, capabilities: { experimentalApi: true } });
    return client;
  }
  request(method: string, params: unknown): Promise<any> {
    return this.prepared(method, params)();
  }
  /** The request serialised now, sent when called: the client's own work kept out of what is measured. */
  prepared(method: string, params: unknown): () => Promise<any> {
    const id = this.nextId++;
    const text = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    return () =>
      new Promise((resolve) => {
        this.waiting.set(id, resolve);
        this.socket.send(text);
      });
  }
}

async function stallOf(work: () => Promise<string>): Promise<{ outcome: string; worstStallMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  try {
    const outcome = await work();
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { outcome, worstStallMs: round(histogram.max / 1e6, 0) };
  } finally {
    histogram.disable();
  }
}

const answerOf = (message: any) => (message.error ? `error ${message.error.code}` : "result");
const tool = (name: string, inputSchema: object) => ({ type: "function", name, description: "a tool", inputSchema });

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
  try {
    const baseUrl = await app.listen({ host: "127.0.0.1", port: 0 });
    const wsUrl = baseUrl.replace("http://", "ws://");
    const measure = async (input: string, work: () => Promise<string>) => {
      log(`hostile: ${input}`);
      results.push({ input, ...(await stallOf(work)) });
    };
    const nested = 8 * 1024 * 1024;
    const nestedBody = Buffer.from(`${"[".repeat(nested)}${"]".repeat(nested)}`);
    await measure(`POST /rpc: arrays nested ${nested.toLocaleString("en-US")} deep (16 MiB)`, async () => {
      const response = await fetch(`${baseUrl}/rpc`, { method: "POST", headers: { "content-type": "application/json" }, body: nestedBody });
      await response.text();
      return `HTTP ${response.status}`;
    });
    const codex = await CodexSocket.open(wsUrl);
    const manyTools = codex.prepared("thread/start", { cwd, dynamicTools: Array.from({ length: 2_000 }, (_, i) => tool(`t${i}`, { type: "object" })) });
    await measure("Codex thread/start: 2,000 dynamic tools", async () => answerOf(await manyTools()));
    const largeSchema = codex.prepared("thread/start", { cwd, dynamicTools: [tool("big", { type: "object", properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: "string" }])) })] });
    await measure("Codex thread/start: a tool schema of 20,000 properties", async () => answerOf(await largeSchema()));
    await measure("Codex thread/start: a tool whose schema has the pattern ^(a+)+$ (never run by the gateway)", async () =>
      answerOf(await codex.request("thread/start", { cwd, dynamicTools: [tool("redos", { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } })] })),
    );
    await measure("Codex: 200 threads with a dynamic tool (they share one Tau connection)", async () => {
      let answered = 0;
      for (let i = 0; i < 200; i++) if (!(await codex.request("thread/start", { cwd, dynamicTools: [tool("echo", { type: "object" })] })).error) answered++;
      return `${answered} started`;
    });
    codex.socket.close();
    const line = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "session/send", params: { sessionId: "s", content: "x".repeat(200) } })}\n`;
    const count = Math.floor((DEFAULT_MAX_TRANSCRIPT_BYTES - 1024) / Buffer.byteLength(line(1_000_000)));
    const transcript = Array.from({ length: count }, (_, i) => line(1_000_000 + i)).join("");
    const postTranscript = async (text: string) => {
      const body = Buffer.from(text);
      const response = await fetch(`${baseUrl}/inspector/api/transcript`, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body });
      await response.text();
      return `HTTP ${response.status}`;
    };
    // Its worker starts at the first check: not measured.
    await postTranscript(line(1));
    await measure("inspector: an 8 MiB transcript checked", () => postTranscript(transcript));
    const deepLine = `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}\n`;
    await measure("inspector: a transcript line of arrays nested 1,000,000 deep", () => postTranscript(deepLine));
  } finally {
    await app.close().catch(() => undefined);
    await stack.close();
    rmSync(cwd, { recursive: true, force: true });
  }
  return results;
}
