import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type WebSocket from "ws";
import { BridgeStack } from "../../src/cli/bridge-stack.js";
import { buildGateway } from "../../src/gateway/app.js";
import type { TokenRegistry } from "../../src/gateway/auth/tokens.js";
import type { GatewayLimits } from "../../src/gateway/limits.js";
import { startTauHost, type RunningTauHost } from "../../src/host/index.js";
import { AskTestClient } from "./ask-client.js";
import { parsePrometheus, type Sample } from "./prometheus.js";
import { resultOf, TauTestClient } from "./tau-client.js";
import { askGatewayDialect } from "../../src/cli/dialects/ask/gateway.js";

/**
 * A whole gateway as `tau-gateway serve` wires it (embedded host, bridge stack, `/tau`, `/rpc`,
 * `POST /rpc`, `/metrics`) with the limits a test chooses, on a free loopback port.
 */
export interface OperatedGateway {
  httpUrl: string;
  rpcUrl: string;
  tauUrl: string;
  app: FastifyInstance;
  stack: BridgeStack;
  /** Working directory of new sessions (a fresh temporary directory). */
  cwd: string;
  /** Host restart on the same port (for reconnects). */
  stopHost(): Promise<void>;
  startHost(): Promise<void>;
  /** GET /metrics, parsed (`token` as a bearer token when the gateway has tokens). */
  scrape(token?: string): Promise<Sample[]>;
  /** An initialized Ask client on `/rpc`; stop() terminates it. */
  askClient(): Promise<AskTestClient & { socket: WebSocket }>;
  /** An initialized Tau client on `/tau`; stop() terminates it. */
  tauClient(): Promise<TauTestClient>;
  stop(): Promise<void>;
}

export interface OperatedGatewayOptions {
  limits?: Partial<GatewayLimits>;
  maxMessageBytes?: number;
  tokens?: TokenRegistry;
  /** Fastify's trustProxy, as `serve --trust-proxy` sets it. */
  trustProxy?: boolean | string[];
  /** Without tokens: the Host names served (`serve --allowed-hosts`, with the loopback names). */
  allowedHosts?: "*" | readonly string[];
  /** Also serve Ask on this Unix socket (`serve --socket`). */
  socketPath?: string;
}

export async function startOperatedGateway(options: OperatedGatewayOptions = {}): Promise<OperatedGateway> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "operated-gateway-")));
  let host: RunningTauHost | undefined;
  let port = 0;
  const startHost = async () => {
    host = await startTauHost({ port });
    port = host.port;
  };
  const stack = new BridgeStack();
  let app: FastifyInstance | undefined;
  const clientSockets: WebSocket[] = [];
  const stop = async () => {
    for (const socket of clientSockets.splice(0).reverse()) socket.terminate();
    await app?.close().catch(() => undefined);
    await stack.close();
    await host?.close().catch(() => undefined);
    host = undefined;
    rmSync(cwd, { recursive: true, force: true });
  };
  try {
    await startHost();
    await stack.start({ upstream: host!.url, defaultCwd: cwd, eventRetention: 100_000, interactionTimeoutMs: 300_000 }, [], () => undefined);
    app = buildGateway({
      tauUpstream: { url: host!.url },
      upstream: stack.upstream!,
      dialects: [askGatewayDialect(stack.ask!, { jsonrpc: { jsonrpcMember: "include" }, ...(options.socketPath ? { socket: { path: options.socketPath, mode: 0o600 } } : {}) })],
      maxMessageBytes: options.maxMessageBytes,
      limits: options.limits,
      tokens: options.tokens,
      trustProxy: options.trustProxy,
      allowedHosts: options.allowedHosts,
    });
    const httpUrl = await app.listen({ host: "127.0.0.1", port: 0 });
    const wsUrl = httpUrl.replace("http://", "ws://");
    const gatewayApp = app;
    return {
      httpUrl,
      rpcUrl: `${wsUrl}/rpc`,
      tauUrl: `${wsUrl}/tau`,
      app: gatewayApp,
      stack,
      cwd,
      stopHost: async () => {
        await host?.close();
        host = undefined;
      },
      startHost,
      async scrape(token?: string) {
        const response = await fetch(`${httpUrl}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
        if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${await response.text()}`);
        return parsePrometheus(await response.text());
      },
      async askClient() {
        const client = await AskTestClient.websocket(`${wsUrl}/rpc`);
        clientSockets.push(client.socket);
        await client.request("initialize", { client: { name: "operated-gateway-tests", version: "1" } });
        return client;
      },
      async tauClient() {
        const client = await TauTestClient.connect(`${wsUrl}/tau`);
        clientSockets.push(client.socket);
        resultOf(await client.initialize(), "initialize");
        return client;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Polls `condition` (no timing assertion: it only bounds how long a test may hang). */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
