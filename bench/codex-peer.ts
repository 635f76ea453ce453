import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { builtCli, repoRoot } from "./processes.js";
import { CHUNK_CHARS, turnText } from "./streaming.js";
import { median, now, round } from "./stats.js";

/**
 * The peer row: the real `codex app-server` (from `@openai/codex` in interop/) streaming one
 * reply of N deltas from a loopback mock of the model API (the Responses API's server-sent
 * events, one `response.output_text.delta` per delta), against `tau-gateway app-server` streaming
 * an N-delta Tau turn from the bench's host. Both are driven over stdio by the same lean client,
 * which counts `item/agentMessage/delta` notifications unparsed, from `turn/start` to the last one.
 * The gateway may merge deltas read together into one notification, so both rates are given:
 * notifications per second, and the turn's deltas (N) per second, the same work either way.
 */

export interface CodexPeerResult {
  target: "codex app-server" | "gateway app-server";
  deltas: number;
  /** Median over the runs: `item/agentMessage/delta` notifications per second. */
  notificationsPerSecond: number;
  /** Median over the runs: the turn's deltas per second (the same work whether or not they were merged). */
  deltasPerSecond: number;
  runs: number[];
}

/** The codex executable: TAU_BENCH_CODEX, or the one interop/ installs. */
export function codexExecutable(): string | undefined {
  const path = process.env.TAU_BENCH_CODEX || join(repoRoot, "interop", "node_modules", ".bin", "codex");
  return existsSync(path) ? path : undefined;
}

/** A loopback stand-in for the model API: every `POST …/responses` gets one streamed reply of `deltas` deltas. */
async function startMockModel(deltas: number): Promise<{ server: Server; baseUrl: string }> {
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const chunk = "x".repeat(CHUNK_CHARS - 1) + " ";
  const body = [
    event("response.created", { response: { id: "resp_bench" } }),
    event("response.output_item.added", { output_index: 0, item: { type: "message", role: "assistant", id: "msg_bench", content: [] } }),
    ...Array.from({ length: deltas }, () => event("response.output_text.delta", { item_id: "msg_bench", output_index: 0, content_index: 0, delta: chunk })),
    event("response.output_item.done", {
      output_index: 0,
      item: { type: "message", role: "assistant", id: "msg_bench", content: [{ type: "output_text", text: chunk.repeat(deltas) }] },
    }),
    event("response.completed", {
      response: { id: "resp_bench", usage: { input_tokens: 1, input_tokens_details: null, output_tokens: deltas, output_tokens_details: null, total_tokens: deltas + 1 } },
    }),
  ].join("");
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (request.method !== "POST" || !request.url?.endsWith("/responses")) return response.writeHead(404).end();
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1` };
}

/** An app-server over stdio: requests by id, and the deltas of the running turn counted unparsed. */
class StdioAppServerClient {
  private readonly pending = new Map<number, { resolve: (result: any) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  deltas = 0;
  lastDeltaAt = 0;
  onTurnCompleted: (() => void) | undefined;

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on("line", (line) => this.receive(line));
    child.once("exit", (code, signal) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`app-server exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  call<T = any>(method: string, params: object): Promise<T> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  notify(method: string): void {
    this.child.stdin!.write(`${JSON.stringify({ method })}\n`);
  }

  private receive(line: string): void {
    // Only the marker is looked for in a delta: the client does not parse what it counts.
    if (line.includes('"item/agentMessage/delta"')) {
      this.deltas++;
      this.lastDeltaAt = now();
      return;
    }
    if (line.includes('"turn/completed"')) return this.onTurnCompleted?.();
    const message = JSON.parse(line) as { id?: number; method?: string; result?: unknown; error?: { code: number; message: string } };
    if (message.method !== undefined || typeof message.id !== "number") return;
    const waiter = this.pending.get(message.id);
    this.pending.delete(message.id);
    if (message.error) waiter?.reject(new Error(`${message.error.code} ${message.error.message}`));
    else waiter?.resolve(message.result);
  }
}

async function measureTurns(client: StdioAppServerClient, text: string, deltas: number, runs: number): Promise<{ notifications: number[]; perDelta: number[] }> {
  await client.call("initialize", { clientInfo: { name: "tau-gateway-bench", version: "1" } });
  client.notify("initialized");
  const { thread } = await client.call<{ thread: { id: string } }>("thread/start", { cwd: tmpdir() });
  const notifications: number[] = [];
  const perDelta: number[] = [];
  // One turn more than measured: the first warms both up.
  for (let run = 0; run <= runs; run++) {
    client.deltas = 0;
    const completed = new Promise<void>((resolve) => (client.onTurnCompleted = resolve));
    const started = now();
    await client.call("turn/start", { threadId: thread.id, input: [{ type: "text", text }] });
    await completed;
    const seconds = (client.lastDeltaAt - started) / 1000;
    if (run === 0) continue;
    notifications.push(round(client.deltas / seconds, 0));
    perDelta.push(round(deltas / seconds, 0));
  }
  return { notifications, perDelta };
}

function summary(target: CodexPeerResult["target"], deltas: number, measured: { notifications: number[]; perDelta: number[] }): CodexPeerResult {
  return { target, deltas, notificationsPerSecond: median(measured.notifications), deltasPerSecond: median(measured.perDelta), runs: measured.notifications };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stdin?.end();
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await gone;
  clearTimeout(timer);
}

/** The real codex app-server against the mock model API. */
export async function measureCodexAppServer(codex: string, deltas: number, runs: number): Promise<CodexPeerResult> {
  const { server, baseUrl } = await startMockModel(deltas);
  const home = mkdtempSync(join(tmpdir(), "tau-bench-codex-home-"));
  writeFileSync(
    join(home, "config.toml"),
    [
      'model = "bench-model"',
      'model_provider = "bench"',
      "[model_providers.bench]",
      'name = "bench"',
      `base_url = "${baseUrl}"`,
      'wire_api = "responses"',
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "",
    ].join("\n"),
  );
  const child = spawn(codex, ["app-server"], { env: { ...process.env, CODEX_HOME: home, OPENAI_API_KEY: "bench" }, stdio: ["pipe", "pipe", "ignore"] });
  try {
    return summary("codex app-server", deltas, await measureTurns(new StdioAppServerClient(child), "bench", deltas, runs));
  } finally {
    await stop(child);
    server.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** `tau-gateway app-server` on the bench's host, its turn echoing a text the host streams in `deltas` deltas. */
export async function measureGatewayAppServer(hostUrl: string, deltas: number, runs: number): Promise<CodexPeerResult> {
  const child = spawn(process.execPath, [builtCli, "app-server", "--upstream", hostUrl], { cwd: repoRoot, env: { ...process.env, NODE_ENV: "production" }, stdio: ["pipe", "pipe", "ignore"] });
  try {
    return summary("gateway app-server", deltas, await measureTurns(new StdioAppServerClient(child), turnText(deltas), deltas, runs));
  } finally {
    await stop(child);
  }
}
