import type { FastifyInstance } from "fastify";
import { AskBridge } from "../bridge/ask-bridge.js";
import { gatewayClientTools, loadToolsConfig, type CommandToolConfig } from "../bridge/interactions/index.js";
import { buildGateway } from "../gateway/app.js";
import type { GatewayConfig } from "../gateway/config.js";
import { pinoLog } from "../gateway/log.js";
import { gatewayVersion } from "../gateway/version.js";
import { startTauHost, type RunningTauHost } from "../host/index.js";
import { TauUpstream, UpstreamVersionError, type UpstreamLog } from "../tau/upstream.js";
import { serveAskWebSocket } from "../transports/ask-websocket.js";
import { UsageError, type CommandIO } from "./io.js";
import { bridgeSettings, envName, integer, logSettings, nonEmpty, readSettings, upstreamSettings, type SettingValues } from "./settings.js";

export const SERVE_USAGE = `usage: tau-gateway serve [options]

Runs the gateway: WebSocket /tau (Tau passthrough), WebSocket /rpc (Ask JSON-RPC),
GET /healthz, /readyz, /schema. Every option can also be set with the environment
variable shown (a flag on the command line wins).

  --host HOST                   listen address (default 127.0.0.1)           ${envName("host")}
  --port PORT                   listen port, 0 = any free port (default 8080) ${envName("port")}
  --upstream embedded|ws://…    Tau host to serve; embedded = start the reference
                                host in-process on a free loopback port (default) ${envName("upstream")}
  --upstream-token TOKEN        sent to the upstream as tau_token (and required by an embedded one)           ${envName("upstream-token")}
  --tools-config FILE           command tools offered to the agent (JSON)    ${envName("tools-config")}
  --jsonrpc-member include|omit "jsonrpc":"2.0" in Ask responses (default include) ${envName("jsonrpc-member")}
  --default-cwd DIR             working directory of new Ask sessions (default: current) ${envName("default-cwd")}
  --event-retention N           events kept per session (default 10000)      ${envName("event-retention")}
  --interaction-timeout-ms MS   unanswered approvals are denied after MS (default 300000) ${envName("interaction-timeout-ms")}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default info) ${envName("log-level")}

Once listening it writes "tau-gateway listening on http://HOST:PORT" to stderr; logs are JSON
lines on stderr. SIGINT or SIGTERM closes everything and exits 0. Exit 1: the upstream cannot
be reached or speaks another protocol version; exit 2: a setting is invalid.`;

const serveSettings = {
  host: { flag: "host", default: "127.0.0.1", parse: nonEmpty },
  port: { flag: "port", default: 8080, parse: integer(0, 65535) },
  ...upstreamSettings,
  ...bridgeSettings,
  ...logSettings,
};

export type ServeSettings = SettingValues<typeof serveSettings>;

export async function runServe(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let settings: ServeSettings;
  try {
    settings = readSettings(argv, env, serveSettings);
  } catch (err) {
    if (err instanceof UsageError && err.exitCode === 0) {
      io.stdout(`${SERVE_USAGE}\n`);
      return 0;
    }
    io.stderr(`tau-gateway serve: ${(err as Error).message}\nRun "tau-gateway serve --help" for the options.\n`);
    return err instanceof UsageError ? err.exitCode : 2;
  }
  let commandTools: CommandToolConfig[] = [];
  if (settings.toolsConfig !== undefined) {
    try {
      commandTools = await loadToolsConfig(settings.toolsConfig);
    } catch (err) {
      io.stderr(`tau-gateway serve: invalid --tools-config ${JSON.stringify(settings.toolsConfig)}: ${(err as Error).message}\n`);
      return 2;
    }
  }

  const running = new Running();
  // Components start before the HTTP app (and its logger) exists; their lines are routed to it once it does.
  const log: UpstreamLog = (level, message, fields) => (running.app ? pinoLog(running.app.log)(level, message, fields) : undefined);
  try {
    await start(settings, commandTools, running, io, log);
  } catch (err) {
    await running.close();
    io.stderr(`tau-gateway serve: ${startupMessage(err)}\n`);
    return 1;
  }

  const signal = await nextSignal();
  running.app?.log.info({ signal }, "shutting down");
  await running.close();
  return 0;
}

async function start(settings: ServeSettings, commandTools: CommandToolConfig[], running: Running, io: CommandIO, log: UpstreamLog): Promise<void> {
  let url: string;
  const token = settings.upstreamToken;
  if (settings.upstream === "embedded") {
    // A token given with the embedded host protects it too (it listens on loopback only).
    running.host = await startTauHost({
      host: "127.0.0.1",
      port: 0,
      authToken: token,
      log: (line) => log("debug", line, { component: "embedded-host" }),
    });
    url = running.host.url;
  } else {
    url = settings.upstream;
  }

  // The bridge connection advertises the tools through which the agent reaches Ask clients (DESIGN §4.4).
  const tools = gatewayClientTools(commandTools, { deadlineMs: settings.interactionTimeoutMs });
  const upstream = new TauUpstream({ url, token, client: { name: "tau-gateway", version: gatewayVersion(), tools }, log });
  running.upstream = upstream;
  const bridge = new AskBridge({
    upstream,
    defaultCwd: settings.defaultCwd,
    serverVersion: gatewayVersion(),
    retention: settings.eventRetention,
    interactionDeadlineMs: settings.interactionTimeoutMs,
    commandTools,
    log,
  });
  running.bridge = bridge;
  // Before the upstream starts, so the bridge sees every message and reconnect.
  bridge.start();
  const config: GatewayConfig = {
    tauUpstream: { url, token },
    upstream,
    askRoute: (socket) => serveAskWebSocket(bridge, socket, { jsonrpcMember: settings.jsonrpcMember }),
    logger: { level: settings.logLevel, stream: process.stderr },
  };
  running.app = buildGateway(config);

  await upstream.start();
  const address = await running.app.listen({ host: settings.host, port: settings.port });
  const port = new URL(address).port || String(settings.port);
  const shownHost = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  io.stderr(`tau-gateway listening on http://${shownHost}:${port}\n`);
}

/** What serve owns; closed in reverse order of starting, each step independent of the others. */
class Running {
  host: RunningTauHost | undefined;
  upstream: TauUpstream | undefined;
  bridge: AskBridge | undefined;
  app: FastifyInstance | undefined;

  async close(): Promise<void> {
    await this.app?.close().catch(() => undefined);
    await this.bridge?.close().catch(() => undefined);
    await this.upstream?.close().catch(() => undefined);
    await this.host?.close().catch(() => undefined);
  }
}

function startupMessage(err: unknown): string {
  if (err instanceof UpstreamVersionError) return `refusing to serve: ${err.message}`;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") return `cannot listen: ${message}`;
  return message;
}

function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      resolve(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}
