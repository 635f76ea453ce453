import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { buildGateway } from "../../src/gateway/app.js";
import { BridgeStack } from "../../src/gateway/bridge-stack.js";
import type { GatewayConfig } from "../../src/gateway/config.js";
import { DrainController } from "../../src/gateway/drain.js";
import { composeAskGates } from "../../src/transports/ask-call-gates.js";
import { serveAskWebSocket } from "../../src/transports/ask-websocket.js";

/**
 * The whole gateway in-process as `tau-gateway serve` wires it — embedded Tau host, bridge stack,
 * `/tau`, WebSocket and HTTP `/rpc`, `/rpc/events`, drain controller — on a free loopback port,
 * with its JSON log lines collected.
 */

export interface HttpGatewayOptions {
  maxMessageBytes?: number;
  sseHeartbeatMs?: number;
  drainTimeoutMs?: number;
  /** Extra config fields (e.g. trustProxy), applied last. */
  extra?: Partial<GatewayConfig>;
}

export interface HttpGateway {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  app: FastifyInstance;
  stack: BridgeStack;
  drain: DrainController;
  /** Parsed JSON log lines, in order. */
  logs: Array<Record<string, any>>;
  stop(): Promise<void>;
}

export async function startHttpGateway(options: HttpGatewayOptions = {}): Promise<HttpGateway> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "http-gateway-cwd-")));
  const stack = new BridgeStack();
  const logs: Array<Record<string, any>> = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) logs.push(JSON.parse(line));
      callback();
    },
  });
  let app: FastifyInstance | undefined;
  const stop = async () => {
    await app?.close().catch(() => undefined);
    await stack.close();
    rmSync(cwd, { recursive: true, force: true });
  };
  try {
    await stack.start({ upstream: "embedded", defaultCwd: cwd, eventRetention: 10_000, interactionTimeoutMs: 300_000 }, [], () => undefined);
    const bridge = stack.bridge!;
    const upstream = stack.upstream!;
    const drain = new DrainController({ timeoutMs: options.drainTimeoutMs ?? 10_000 });
    drain.addSource("upstream requests", () => upstream.openRequests);
    const jsonrpc = { jsonrpcMember: "include" as const, gate: drain.askGate };
    app = buildGateway({
      tauUpstream: { url: stack.url! },
      upstream,
      askRoute: (socket, request, connection) =>
        serveAskWebSocket(bridge, socket, { ...jsonrpc, gate: composeAskGates(connection.gate, drain.askGate), tenant: request.tenant }),
      askHttp: { bridge, jsonrpc, sseHeartbeatMs: options.sseHeartbeatMs },
      drain,
      maxMessageBytes: options.maxMessageBytes,
      logger: { level: "info", stream: logStream },
      ...options.extra,
    });
    const baseUrl = await app.listen({ host: "127.0.0.1", port: 0 });
    return { baseUrl, app, stack, drain, logs, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** POSTs a JSON-RPC body to `/rpc`. */
export async function postRpc(baseUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; contentType: string | null }> {
  const response = await fetch(`${baseUrl}/rpc`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text), contentType: response.headers.get("content-type") };
}
