import { parentPort, workerData } from "node:worker_threads";
import WebSocket from "ws";

/**
 * The hostile client of bench/hostile.ts, in a worker thread of its own: building, sending and
 * reading its inputs never holds the event loop of the gateway under measure. For each input it
 * prepares the request (serialised in full), says `ready`, sends it on `go`, and reports what the
 * gateway answered. Before the inputs it makes one ordinary request of each kind (a `POST /rpc`,
 * a Codex thread with a dynamic tool, a one-line transcript): what a gateway does once per
 * process on first use (loading a dialect's validators, compiling the meta-schema check,
 * starting the inspector's worker) is not what a hostile input costs.
 */

export interface HostileClientSettings {
  baseUrl: string;
  cwd: string;
  maxTranscriptBytes: number;
}

export type HostileClientMessage = { ready: string } | { outcome: string } | { done: true } | { failed: string };

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
  /** The request serialised now, sent when called. */
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

const answerOf = (message: any) => (message.error ? `error ${message.error.code}` : "result");
const tool = (name: string, inputSchema: object) => ({ type: "function", name, description: "a tool", inputSchema });

async function post(url: string, contentType: string, body: Uint8Array<ArrayBuffer>): Promise<string> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": contentType }, body });
  await response.arrayBuffer();
  return `HTTP ${response.status}`;
}

/** Each input: its label and what sends it (everything the sending needs is built before). */
type Input = [label: string, prepare: () => () => Promise<string>];

async function run({ baseUrl, cwd, maxTranscriptBytes }: HostileClientSettings): Promise<void> {
  const port = parentPort!;
  const go = () => new Promise<void>((resolve) => port.once("message", () => resolve()));
  const rpc = `${baseUrl}/rpc`;
  const transcriptUrl = `${baseUrl}/inspector/api/transcript`;
  const codex = await CodexSocket.open(baseUrl.replace("http://", "ws://"));

  // Warm-up: each kind of request once (see the top of this file).
  await post(rpc, "application/json", Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })));
  await codex.request("thread/start", { cwd, dynamicTools: [tool("warm", { type: "object", properties: { s: { type: "string" } } })] });
  const line = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "session/send", params: { sessionId: "s", content: "x".repeat(200) } })}\n`;
  await post(transcriptUrl, "application/x-ndjson", Buffer.from(line(1)));

  const nested = 8 * 1024 * 1024;
  const inputs: Input[] = [
    [
      `POST /rpc: arrays nested ${nested.toLocaleString("en-US")} deep (16 MiB)`,
      () => {
        const body = Buffer.from(`${"[".repeat(nested)}${"]".repeat(nested)}`);
        return () => post(rpc, "application/json", body);
      },
    ],
    [
      "Codex thread/start: 2,000 dynamic tools",
      () => {
        const send = codex.prepared("thread/start", { cwd, dynamicTools: Array.from({ length: 2_000 }, (_, i) => tool(`t${i}`, { type: "object" })) });
        return async () => answerOf(await send());
      },
    ],
    [
      "Codex thread/start: a tool schema of 20,000 properties",
      () => {
        const properties = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: "string" }]));
        const send = codex.prepared("thread/start", { cwd, dynamicTools: [tool("big", { type: "object", properties })] });
        return async () => answerOf(await send());
      },
    ],
    [
      "Codex thread/start: a tool whose schema has the pattern ^(a+)+$ (never run by the gateway)",
      () => {
        const send = codex.prepared("thread/start", { cwd, dynamicTools: [tool("redos", { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } })] });
        return async () => answerOf(await send());
      },
    ],
    [
      "Codex: 200 threads with a dynamic tool (they share one Tau connection)",
      () => {
        const sends = Array.from({ length: 200 }, () => codex.prepared("thread/start", { cwd, dynamicTools: [tool("echo", { type: "object" })] }));
        return async () => {
          let answered = 0;
          for (const send of sends) if (!(await send()).error) answered++;
          return `${answered} started`;
        };
      },
    ],
    [
      "inspector: an 8 MiB transcript checked",
      () => {
        const count = Math.floor((maxTranscriptBytes - 1024) / Buffer.byteLength(line(1_000_000)));
        const body = Buffer.from(Array.from({ length: count }, (_, i) => line(1_000_000 + i)).join(""));
        return () => post(transcriptUrl, "application/x-ndjson", body);
      },
    ],
    [
      "inspector: a transcript line of arrays nested 1,000,000 deep",
      () => {
        const body = Buffer.from(`${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}\n`);
        return () => post(transcriptUrl, "application/x-ndjson", body);
      },
    ],
  ];
  for (const [label, prepare] of inputs) {
    const send = prepare();
    const started = go();
    port.postMessage({ ready: label } satisfies HostileClientMessage);
    await started;
    port.postMessage({ outcome: await send() } satisfies HostileClientMessage);
  }
  codex.socket.close();
  port.postMessage({ done: true } satisfies HostileClientMessage);
}

run(workerData as HostileClientSettings).catch((error) => parentPort!.postMessage({ failed: String(error?.stack ?? error) } satisfies HostileClientMessage));
