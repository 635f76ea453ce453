import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { CommandToolConfig } from "../../src/bridge/interactions/index.js";
import { BridgeStack } from "../../src/cli/bridge-stack.js";
import { buildGateway } from "../../src/gateway/app.js";
import { startTauHost, type RunningTauHost, type TauHostOptions } from "../../src/host/index.js";
import { TauUpstream } from "../../src/tau/upstream.js";
import { AskTestClient } from "./ask-client.js";
import { CodexTestClient } from "./codex-client.js";
import type { Cleanups } from "./cleanups.js";

/**
 * A gateway for tests, put together as `tau-gateway serve` does: an embedded Tau host (started
 * here, so a test can stop it and start it again on the same port with the same state directory),
 * the bridge stack connected to it, and the HTTP app serving `/rpc` (Ask) and `/` (Codex
 * app-server) on a free loopback port.
 */

export interface TestGatewayOptions {
  interactionTimeoutMs?: number;
  commandTools?: CommandToolConfig[];
  jsonrpcMember?: "include" | "omit";
  maxBatch?: number;
  eventRetention?: number;
  /** Sessions of the embedded host persist here (so they survive a host restart). */
  stateDir?: string;
  /** Default cwd of new sessions (default: a fresh temporary directory). */
  defaultCwd?: string;
  /** --workspace-root values (default: none, unconfined). */
  workspaceRoots?: string[];
  host?: Omit<TauHostOptions, "port" | "stateDir">;
}

export interface TestGateway {
  /** ws://…/rpc */
  rpcUrl: string;
  /** ws://…/ (Codex app-server) */
  codexUrl: string;
  stack: BridgeStack;
  app: FastifyInstance;
  host: RunningTauHost | undefined;
  /** The temporary working directory new sessions get. */
  cwd: string;
  /** An Ask client on `/rpc`, closed by stop(). */
  client(options?: { jsonrpc?: boolean }): Promise<AskTestClient & { socket: import("ws").WebSocket }>;
  /** A Codex app-server client on `/`, closed by stop(). */
  codexClient(): Promise<CodexTestClient & { socket: import("ws").WebSocket }>;
  stopHost(): Promise<void>;
  /** Starts the host again on the same port with the same state directory. */
  startHost(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const temporary: string[] = [];
  const tempDir = (prefix: string) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    temporary.push(dir);
    return dir;
  };
  const cwd = options.defaultCwd ?? tempDir("ask-cwd-");
  let port = 0;
  let host: RunningTauHost | undefined;
  const startHost = async () => {
    host = await startTauHost({ ...options.host, port, stateDir: options.stateDir });
    port = host.port;
  };
  await startHost();

  const stack = new BridgeStack();
  const clients: Array<{ socket: import("ws").WebSocket }> = [];
  let app: FastifyInstance | undefined;
  const stop = async () => {
    for (const c of clients) c.socket.terminate();
    await app?.close().catch(() => undefined);
    await stack.close();
    await host?.close().catch(() => undefined);
    host = undefined;
    for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await stack.start(
      {
        upstream: host!.url,
        defaultCwd: cwd,
        workspaceRoots: options.workspaceRoots,
        eventRetention: options.eventRetention ?? 10_000,
        interactionTimeoutMs: options.interactionTimeoutMs ?? 300_000,
      },
      options.commandTools ?? [],
      () => undefined,
    );
    app = buildGateway({
      tauUpstream: { url: host!.url },
      upstream: stack.upstream!,
      ask: { bridge: stack.bridge!, jsonrpc: { jsonrpcMember: options.jsonrpcMember ?? "include", maxBatch: options.maxBatch } },
      codex: { bridge: stack.codex! },
    });
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    const rpcUrl = `${address.replace("http://", "ws://")}/rpc`;
    const codexUrl = `${address.replace("http://", "ws://")}/`;
    return {
      rpcUrl,
      codexUrl,
      stack,
      app,
      get host() {
        return host;
      },
      cwd,
      async client(clientOptions = {}) {
        const client = await AskTestClient.websocket(rpcUrl, clientOptions);
        clients.push(client);
        return client;
      },
      async codexClient() {
        const client = await CodexTestClient.websocket(codexUrl);
        clients.push(client);
        return client;
      },
      async stopHost() {
        await host?.close();
        host = undefined;
      },
      startHost,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The gateway app alone (not listening) in front of the Tau host at `upstreamUrl`, with its own
 * upstream connection (not started, never reconnecting); both are closed after the test.
 */
export function gatewayInFrontOf(upstreamUrl: string, cleanups: Cleanups): { app: FastifyInstance; upstream: TauUpstream } {
  const upstream = new TauUpstream({ url: upstreamUrl, client: { name: "gateway-tests", version: "1" }, reconnect: false });
  cleanups.push(() => upstream.close());
  const app = buildGateway({ tauUpstream: { url: upstreamUrl }, upstream });
  cleanups.push(() => app.close());
  return { app, upstream };
}

export interface EmbeddedStackGateway {
  app: FastifyInstance;
  stack: BridgeStack;
  /** Default cwd of new sessions (a fresh temporary directory). */
  cwd: string;
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * The bridge stack on an embedded host (new sessions get a fresh temporary directory as cwd) and
 * the app `build` makes on it, listening on a free loopback port. stop(), also run when starting
 * fails, closes the app and the stack and removes the directory.
 */
export async function listenOnEmbeddedStack(
  settings: { cwdPrefix: string; eventRetention: number; upstreamToken?: string; tenantWorkspaceRoots?: ReadonlyMap<string, readonly string[]> },
  build: (stack: BridgeStack) => FastifyInstance,
): Promise<EmbeddedStackGateway> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), settings.cwdPrefix)));
  const stack = new BridgeStack();
  let app: FastifyInstance | undefined;
  const stop = async () => {
    await app?.close().catch(() => undefined);
    await stack.close();
    rmSync(cwd, { recursive: true, force: true });
  };
  try {
    const { upstreamToken, eventRetention } = settings;
    await stack.start(
      { upstream: "embedded", upstreamToken, defaultCwd: cwd, eventRetention, interactionTimeoutMs: 300_000, tenantWorkspaceRoots: settings.tenantWorkspaceRoots },
      [],
      () => undefined,
    );
    app = build(stack);
    const baseUrl = await app.listen({ host: "127.0.0.1", port: 0 });
    return { app, stack, cwd, baseUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
