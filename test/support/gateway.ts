import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { ApprovalPolicy, CommandToolConfig } from "../../src/bridge/interactions/index.js";
import { BridgeStack } from "../../src/cli/bridge-stack.js";
import { askGatewayDialect } from "../../src/cli/dialects/ask/gateway.js";
import { buildGateway } from "../../src/gateway/app.js";
import { startTauHost, type RunningTauHost, type TauHostOptions } from "../../src/host/index.js";
import { TauUpstream } from "../../src/tau/upstream.js";
import { AskTestClient } from "./ask-client.js";
import { eventually } from "./ask-events.js";
import { CodexTestClient } from "./codex-client.js";
import type { Cleanups } from "./cleanups.js";
import { startCountingRelay, type CountingRelay, type CountingRelayOptions } from "./counting-relay.js";
import type { Log } from "../../src/shared/log.js";

/**
 * A gateway for tests, put together as `tau-gateway serve` does: an embedded Tau host (started
 * here, so a test can stop it and start it again on the same port with the same state directory),
 * the bridge stack connected to it, and the HTTP app serving `/rpc` (Ask) and `/` (Codex
 * app-server) on a free loopback port.
 */

export interface TestGatewayOptions {
  interactionTimeoutMs?: number;
  commandTools?: CommandToolConfig[];
  /** --approval-policy, read (default: none, each session's mode decides). */
  approvalPolicy?: ApprovalPolicy;
  /** --audit DIR (default: none). */
  auditDir?: string;
  jsonrpcMember?: "include" | "omit";
  maxBatch?: number;
  eventRetention?: number;
  /** Sessions of the embedded host persist here (so they survive a host restart). */
  stateDir?: string;
  /** Default cwd of new sessions (default: a fresh temporary directory). */
  defaultCwd?: string;
  /** --workspace-root values (default: none, unconfined). */
  workspaceRoots?: string[];
  /** Also serve Ask on a Unix socket (in a fresh temporary directory), as `serve --socket` does. */
  socket?: boolean;
  /** Reach the Tau host through a counting relay (which can hold the host's messages back), with these options if given. */
  relay?: boolean | CountingRelayOptions;
  host?: Omit<TauHostOptions, "port" | "stateDir">;
  /** --drain-timeout, in ms (default: serve's). */
  drainTimeoutMs?: number;
}

export interface TestGateway {
  /** ws://…/rpc */
  rpcUrl: string;
  /** ws://…/ (Codex app-server) */
  codexUrl: string;
  /** ws://…/acp (Agent Client Protocol) */
  acpUrl: string;
  stack: BridgeStack;
  app: FastifyInstance;
  host: RunningTauHost | undefined;
  /** The temporary working directory new sessions get. */
  cwd: string;
  /** The Unix socket serving Ask (with `socket: true`). */
  socketPath: string | undefined;
  /** The relay between the bridge connection and the host (with `relay: true`). */
  relay: CountingRelay | undefined;
  /** An Ask client on `/rpc`, closed by stop(). */
  client(options?: { jsonrpc?: boolean }): Promise<AskTestClient & { socket: import("ws").WebSocket }>;
  /** A Codex app-server client on `/`, closed by stop(). */
  codexClient(): Promise<CodexTestClient & { socket: import("ws").WebSocket }>;
  /** An Ask client on the Unix socket (with `socket: true`), disconnected by stop(). */
  socketClient(options?: { jsonrpc?: boolean }): Promise<AskTestClient & { socket: import("node:net").Socket }>;
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
  const disconnects: Array<() => void> = [];
  let app: FastifyInstance | undefined;
  let relay: CountingRelay | undefined;
  const socketPath = options.socket ? join(tempDir("ask-gateway-socket-"), "ask.sock") : undefined;
  const stop = async () => {
    for (const disconnect of disconnects) disconnect();
    // Whatever the relay still holds is let go, so nothing waits on it while closing.
    relay?.release();
    await app?.close().catch(() => undefined);
    await stack.close();
    await relay?.close();
    await host?.close().catch(() => undefined);
    host = undefined;
    for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (options.relay) relay = await startCountingRelay(host!.url, options.relay === true ? {} : options.relay);
    // Every setting goes to the stack and the app alike, as `serve` hands them its one settings object.
    const settings = {
      upstream: relay?.url ?? host!.url,
      defaultCwd: cwd,
      workspaceRoots: options.workspaceRoots,
      eventRetention: options.eventRetention ?? 10_000,
      interactionTimeoutMs: options.interactionTimeoutMs ?? 300_000,
      drainTimeout: options.drainTimeoutMs,
      ...(options.approvalPolicy ? { approvalPolicy: options.approvalPolicy } : {}),
      ...(options.auditDir ? { auditDir: options.auditDir } : {}),
    };
    await stack.start(settings, options.commandTools ?? [], () => undefined);
    app = buildGateway({
      tauUpstream: { url: host!.url },
      upstream: stack.upstream!,
      // Ask with a test's own batch bound, which serve has no setting for.
      dialects: stack
        .gatewayDialects({})
        .map((dialect) =>
          dialect.name === "ask"
            ? askGatewayDialect(stack.ask!, { jsonrpc: { jsonrpcMember: options.jsonrpcMember ?? "include", maxBatch: options.maxBatch }, ...(socketPath ? { socket: { path: socketPath, mode: 0o600 } } : {}) })
            : dialect,
        ),
      drainTimeoutMs: settings.drainTimeout,
      receipts: stack.receipts,
    });
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    const rpcUrl = `${address.replace("http://", "ws://")}/rpc`;
    const codexUrl = `${address.replace("http://", "ws://")}/`;
    return {
      rpcUrl,
      codexUrl,
      acpUrl: `${address.replace("http://", "ws://")}/acp`,
      stack,
      app,
      get host() {
        return host;
      },
      cwd,
      socketPath,
      relay,
      async client(clientOptions = {}) {
        const client = await AskTestClient.websocket(rpcUrl, clientOptions);
        disconnects.push(() => client.socket.terminate());
        return client;
      },
      async socketClient(clientOptions = {}) {
        if (!socketPath) throw new Error("this gateway serves no Unix socket (start it with socket: true)");
        const client = await AskTestClient.unixSocket(socketPath, clientOptions);
        disconnects.push(() => client.socket.destroy());
        return client;
      },
      async codexClient() {
        const client = await CodexTestClient.websocket(codexUrl);
        disconnects.push(() => client.socket.terminate());
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
  settings: {
    cwdPrefix: string;
    eventRetention: number;
    upstreamToken?: string;
    tenantWorkspaceRoots?: ReadonlyMap<string, readonly string[]>;
    commandTools?: CommandToolConfig[];
    /** --approval-policy, read, and --audit DIR (default: neither). */
    approvalPolicy?: ApprovalPolicy;
    auditDir?: string;
    /** Where the bridge stack logs (default nowhere). */
    log?: Log;
  },
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
      {
        upstream: "embedded",
        upstreamToken,
        defaultCwd: cwd,
        eventRetention,
        interactionTimeoutMs: 300_000,
        tenantWorkspaceRoots: settings.tenantWorkspaceRoots,
        ...(settings.approvalPolicy ? { approvalPolicy: settings.approvalPolicy } : {}),
        ...(settings.auditDir ? { auditDir: settings.auditDir } : {}),
      },
      settings.commandTools ?? [],
      settings.log ?? (() => undefined),
    );
    app = build(stack);
    const baseUrl = await app.listen({ host: "127.0.0.1", port: 0 });
    return { app, stack, cwd, baseUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Drops a client's WebSocket at once and resolves once the gateway has seen it go. */
export async function dropConnection(gw: Pick<TestGateway, "app">, socket: import("ws").WebSocket): Promise<void> {
  const before = gw.app.websocketServer.clients.size;
  socket.terminate();
  await eventually(() => gw.app.websocketServer.clients.size === before - 1, "the gateway to see the connection go");
}
