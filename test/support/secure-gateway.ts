import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import WebSocket from "ws";
import { buildGateway } from "../../src/gateway/app.js";
import type { OriginAllowlist } from "../../src/gateway/auth/origins.js";
import type { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import { BridgeStack } from "../../src/gateway/bridge-stack.js";
import { serveAskWebSocket } from "../../src/transports/ask-websocket.js";

/**
 * A gateway with its front-door settings (tokens, allowed origins, trusted proxies), put together
 * as `tau-gateway serve` does — embedded host, bridge stack, `/rpc` with the request's tenant — on
 * a free loopback port, with every log line it writes kept for inspection.
 */

export interface SecureGatewayOptions {
  tokens?: TokenRegistry;
  allowedOrigins?: OriginAllowlist;
  trustProxy?: boolean | string[];
  /** Protects the embedded host; the gateway uses it for both of its upstream paths. */
  upstreamToken?: string;
}

export interface SecureGateway {
  app: FastifyInstance;
  stack: BridgeStack;
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  /** ws://127.0.0.1:PORT + path */
  wsUrl(path: string): string;
  /** Working directory for sessions. */
  cwd: string;
  /** Every JSON log line written so far (level trace). */
  logText(): string;
  stop(): Promise<void>;
}

export async function startSecureGateway(options: SecureGatewayOptions = {}): Promise<SecureGateway> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "secure-gateway-")));
  let logs = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString("utf8");
      done();
    },
  });
  const stack = new BridgeStack();
  let app: FastifyInstance | undefined;
  const stop = async () => {
    await app?.close().catch(() => undefined);
    await stack.close();
    rmSync(cwd, { recursive: true, force: true });
  };
  try {
    await stack.start({ upstream: "embedded", upstreamToken: options.upstreamToken, defaultCwd: cwd, eventRetention: 1000, interactionTimeoutMs: 300_000 }, [], () => undefined);
    const bridge = stack.bridge!;
    app = buildGateway({
      tauUpstream: { url: stack.url!, token: options.upstreamToken },
      upstream: stack.upstream!,
      askRoute: (socket, request) => serveAskWebSocket(bridge, socket, { jsonrpcMember: "include", tenant: request.tenant }),
      logger: { level: "trace", stream },
      tokens: options.tokens,
      allowedOrigins: options.allowedOrigins,
      trustProxy: options.trustProxy,
    });
    const baseUrl = await app.listen({ host: "127.0.0.1", port: 0 });
    return { app, stack, baseUrl, wsUrl: (path) => `${baseUrl.replace("http://", "ws://")}${path}`, cwd, logText: () => logs, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export type UpgradeOutcome = { opened: true; socket: WebSocket } | { opened: false; status: number; headers: IncomingHttpHeaders; body: string };

/** Attempts a WebSocket upgrade; reports the HTTP answer when the server refuses it. An opened socket is the caller's to close. */
export function tryUpgrade(url: string, headers: Record<string, string> = {}): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once("open", () => resolve({ opened: true, socket }));
    socket.once("unexpected-response", (_request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => {
        resolve({ opened: false, status: response.statusCode ?? 0, headers: response.headers, body });
        socket.terminate();
      });
    });
    socket.once("error", (err) => reject(err));
  });
}
