import { Writable } from "node:stream";
import { buildGateway } from "../../src/gateway/app.js";
import type { GatewayConfig } from "../../src/gateway/config.js";
import type { DrainController } from "../../src/gateway/drain.js";
import { listenOnEmbeddedStack, type EmbeddedStackGateway } from "./gateway.js";
import { askGatewayDialect } from "../../src/cli/dialects/ask/gateway.js";

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

export interface HttpGateway extends EmbeddedStackGateway {
  drain: DrainController;
  /** Parsed JSON log lines, in order. */
  logs: Array<Record<string, any>>;
}

export async function startHttpGateway(options: HttpGatewayOptions = {}): Promise<HttpGateway> {
  const logs: Array<Record<string, any>> = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) logs.push(JSON.parse(line));
      callback();
    },
  });
  const gateway = await listenOnEmbeddedStack({ cwdPrefix: "http-gateway-cwd-", eventRetention: 10_000 }, (stack) =>
    buildGateway({
      tauUpstream: { url: stack.url! },
      upstream: stack.upstream!,
      dialects: [askGatewayDialect(stack.ask!, { jsonrpc: { jsonrpcMember: "include" } })],
      sseHeartbeatMs: options.sseHeartbeatMs,
      drainTimeoutMs: options.drainTimeoutMs,
      maxMessageBytes: options.maxMessageBytes,
      logger: { level: "info", stream: logStream },
      ...options.extra,
    }),
  );
  return { ...gateway, drain: gateway.app.drain, logs };
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
