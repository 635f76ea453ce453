import type { FastifyInstance } from "fastify";
import { loadToolsConfig, type CommandToolConfig } from "../bridge/interactions/index.js";
import { buildGateway } from "../gateway/app.js";
import type { GatewayConfig } from "../gateway/config.js";
import { pinoLog } from "../gateway/log.js";
import { BridgeStack } from "../gateway/bridge-stack.js";
import { UpstreamVersionError, type UpstreamLog } from "../tau/upstream.js";
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
  const { stack } = running;
  await stack.start(settings, commandTools, log);
  const bridge = stack.bridge!;
  const config: GatewayConfig = {
    tauUpstream: { url: stack.url!, token: settings.upstreamToken },
    upstream: stack.upstream!,
    askRoute: (socket) => serveAskWebSocket(bridge, socket, { jsonrpcMember: settings.jsonrpcMember }),
    logger: { level: settings.logLevel, stream: process.stderr },
  };
  running.app = buildGateway(config);
  const address = await running.app.listen({ host: settings.host, port: settings.port });
  const port = new URL(address).port || String(settings.port);
  const shownHost = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  io.stderr(`tau-gateway listening on http://${shownHost}:${port}\n`);
}

/** What serve owns: the HTTP app in front of the bridge stack. */
class Running {
  readonly stack = new BridgeStack();
  app: FastifyInstance | undefined;

  async close(): Promise<void> {
    await this.app?.close().catch(() => undefined);
    await this.stack.close();
  }
}

export function startupMessage(err: unknown): string {
  if (err instanceof UpstreamVersionError) return `refusing to serve: ${err.message}`;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") return `cannot listen: ${message}`;
  return message;
}

export function nextSignal(): Promise<NodeJS.Signals> {
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
