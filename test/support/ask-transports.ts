import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe } from "vitest";
import type { CommandToolConfig } from "../../src/bridge/interactions/index.js";
import { startTauHost } from "../../src/host/index.js";
import { AskTestClient } from "./ask-client.js";
import { Cleanups } from "./cleanups.js";
import { startCountingRelay, type CountingRelay } from "./counting-relay.js";
import { startTestGateway } from "./gateway.js";
import { exitWithin, spawnStdio } from "./stdio-child.js";

/**
 * One Ask gateway per transport, so a suite can drive the same assertions over each of them:
 *
 * - `stdio`: the real `tau-gateway stdio` process, as a client spawns it, on a Tau host started
 *   here (`--upstream`), with `--socket` so that the tests' second connection attaches to the same
 *   process as the Ask host's clients do;
 * - `WebSocket /rpc`: the gateway in this process as `serve` wires it;
 * - `Unix socket`: the same in-process gateway serving the socket (`serve --socket`).
 *
 * Every gateway has its own Tau host (so one transport's sessions never show in another's lists),
 * optionally behind a counting relay that can hold the host's messages back.
 */

export const ASK_TRANSPORTS = ["stdio", "WebSocket /rpc", "Unix socket"] as const;
export type AskTransportName = (typeof ASK_TRANSPORTS)[number];

export interface AskTransportOptions {
  /** A counting relay between the gateway and its Tau host (`transport.relay`). */
  relay?: boolean;
  commandTools?: CommandToolConfig[];
  jsonrpcMember?: "include" | "omit";
  interactionTimeoutMs?: number;
  /** Pause between the scripted agent's streamed chunks (default 0). */
  streamDelayMs?: number;
  /** The default working directory is also the one workspace root (`--workspace-root`). */
  confineToDefaultCwd?: boolean;
}

export interface AskTransport {
  readonly name: AskTransportName;
  /** ws:// of the Tau host behind the gateway (not the relay), to look at Tau directly. */
  readonly hostUrl: string;
  readonly relay: CountingRelay | undefined;
  /** Default working directory of new sessions. */
  readonly cwd: string;
  /**
   * The connection a test drives the gateway over: a new one per call on WebSocket and the socket;
   * on stdio the process's one stdin/stdout, seen afresh from the call on (lines written before it
   * are not in the new client's `received`).
   */
  client(options?: { jsonrpc?: boolean }): Promise<AskTestClient>;
  /** One more connection to the same gateway (same sessions): on stdio a client of the process's Unix socket. */
  another(options?: { jsonrpc?: boolean }): Promise<AskTestClient>;
  /** Closes the connections opened since the last call (the stdio process stays). */
  disconnectClients(): void;
  stop(): Promise<void>;
}

export async function startAskTransport(name: AskTransportName, options: AskTransportOptions = {}): Promise<AskTransport> {
  return name === "stdio" ? startStdio(options) : startInProcess(name, options);
}

/**
 * `describe` once per transport, each block with its own gateway, started before its first test
 * and stopped after its last; the connections a test opens are closed after it.
 */
export function describeOverAskTransports(title: string, options: AskTransportOptions, body: (transport: () => AskTransport) => void): void {
  describe.each(ASK_TRANSPORTS)(`${title} over %s`, (name) => {
    let started: AskTransport | undefined;
    beforeAll(async () => {
      started = await startAskTransport(name, options);
    });
    afterEach(() => started?.disconnectClients());
    afterAll(() => started?.stop());
    body(() => {
      if (!started) throw new Error(`the ${name} gateway did not start`);
      return started;
    });
  });
}

const temporaryDirectory = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

async function startInProcess(name: "WebSocket /rpc" | "Unix socket", options: AskTransportOptions): Promise<AskTransport> {
  const confined = options.confineToDefaultCwd ? temporaryDirectory("ask-transport-cwd-") : undefined;
  const gw = await startTestGateway({
    ...(confined ? { defaultCwd: confined, workspaceRoots: [confined] } : {}),
    socket: name === "Unix socket",
    host: { streamDelayMs: options.streamDelayMs },
    relay: options.relay,
    commandTools: options.commandTools,
    jsonrpcMember: options.jsonrpcMember,
    interactionTimeoutMs: options.interactionTimeoutMs,
  });
  let open: Array<() => void> = [];
  const connect = async (clientOptions: { jsonrpc?: boolean } = {}): Promise<AskTestClient> => {
    if (name === "Unix socket") {
      const client = await gw.socketClient(clientOptions);
      open.push(() => client.socket.destroy());
      return client;
    }
    const client = await gw.client(clientOptions);
    open.push(() => client.socket.terminate());
    return client;
  };
  return {
    name,
    hostUrl: gw.host!.url,
    relay: gw.relay,
    cwd: gw.cwd,
    client: connect,
    another: connect,
    disconnectClients() {
      for (const disconnect of open) disconnect();
      open = [];
    },
    async stop() {
      await gw.stop();
      if (confined) rmSync(confined, { recursive: true, force: true });
    },
  };
}

async function startStdio(options: AskTransportOptions): Promise<AskTransport> {
  const cleanups = new Cleanups();
  try {
    const dir = temporaryDirectory("ask-transport-stdio-");
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const host = await startTauHost({ port: 0, streamDelayMs: options.streamDelayMs });
    cleanups.push(() => host.close());
    const relay = options.relay ? await startCountingRelay(host.url) : undefined;
    if (relay) cleanups.push(() => relay.close());

    const socketPath = join(dir, "ask.sock");
    // A short drain: a test that leaves a turn running must not hold the teardown for long.
    const args = ["--upstream", relay?.url ?? host.url, "--socket", socketPath, "--drain-timeout", "2000"];
    if (options.jsonrpcMember) args.push("--jsonrpc-member", options.jsonrpcMember);
    if (options.interactionTimeoutMs !== undefined) args.push("--interaction-timeout-ms", String(options.interactionTimeoutMs));
    const confined = options.confineToDefaultCwd ? join(dir, "workspace") : undefined;
    if (confined) {
      mkdirSync(confined);
      // The later --default-cwd wins over the one spawnStdio gives.
      args.push("--default-cwd", confined, "--workspace-root", confined);
    }
    if (options.commandTools) {
      const toolsFile = join(dir, "tools.json");
      writeFileSync(toolsFile, JSON.stringify({ tools: options.commandTools }));
      args.push("--tools-config", toolsFile);
    }
    const stdio = spawnStdio(args, cleanups);
    // Ends the way a client ends it: stdin closed, then the exit awaited (the kill in spawnStdio's cleanup is the fallback).
    cleanups.push(async () => {
      relay?.release();
      stdio.child.stdin.end();
      await exitWithin(stdio.exit, 10_000);
    });
    // The socket listens before stdin is read: once stdio answers, socket clients can attach.
    await stdio.client.request("ping");

    let views = 0;
    let open: Array<AskTestClient & { socket: Socket }> = [];
    return {
      name: "stdio",
      hostUrl: host.url,
      relay,
      cwd: confined ?? stdio.cwd,
      async client(clientOptions = {}) {
        views += 1;
        return stdio.freshClient({ ...clientOptions, firstId: views * 1_000_000 + 1 });
      },
      async another(clientOptions = {}) {
        const client = await AskTestClient.unixSocket(socketPath, clientOptions);
        open.push(client);
        return client;
      },
      disconnectClients() {
        for (const client of open) client.socket.destroy();
        open = [];
      },
      stop: () => cleanups.runNewestFirst(),
    };
  } catch (error) {
    await cleanups.runNewestFirst();
    throw error;
  }
}
