import type { FastifyInstance } from "fastify";
import type { ApprovalPolicy, CommandToolConfig } from "../bridge/interactions/index.js";
import { buildGateway } from "../gateway/app.js";
import { allowedHostNames } from "../gateway/auth/hosts.js";
import type { TokenRegistry } from "../gateway/auth/tokens.js";
import type { GatewayConfig } from "../gateway/config.js";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "../gateway/drain.js";
import { pinoLog } from "../gateway/log.js";
import { DEFAULT_SSE_HEARTBEAT_MS } from "./dialects/ask/events-route.js";
import { gatewayVersion } from "../gateway/version.js";
import type { Log } from "../shared/log.js";
import { startTracing, tracingFlushBudget, type StopTracing } from "../shared/tracing.js";
import { RecordingFolder } from "../transports/recording/recording-folder.js";
import { InspectorHub } from "../gateway/inspector/inspector-hub.js";
import { INSPECTOR_USAGE, inspectorSettings } from "./inspector-settings.js";
import { ACCESS_USAGE, accessSettings, loadTokens } from "./access-settings.js";
import { BridgeStack } from "./bridge-stack.js";
import { readApprovalPolicy, readCommandSettings, readCommandTools, startupMessage } from "./command-setup.js";
import { exitStatus, type CommandIO } from "./io.js";
import { LIMIT_USAGE, limitSettings } from "./limit-settings.js";
import { RECORD_USAGE, recordLimits, recordSettings } from "./record-settings.js";
import { nextStopSignal, onStopSignals } from "./stop-signals.js";
import { bridgeSettings, envName, integer, logSettings, nonEmpty, socketSettings, storeSettings, STORE_USAGE, upstreamSettings, type SettingValues } from "./settings.js";

export const SERVE_USAGE = `usage: tau-gateway serve [options]

Runs the gateway: WebSocket / (Codex app-server v2), WebSocket /tau (Tau passthrough),
WebSocket /rpc and POST /rpc (Ask JSON-RPC), GET /rpc/events (server-sent events), WebSocket
/acp (Agent Client Protocol), GET /healthz, /readyz, /metrics, /schema, and with --socket the Ask
surface as NDJSON on a Unix socket. Every option can also be set with the environment variable
shown (a flag on the command line wins).

  --host HOST                   listen address (default 127.0.0.1)           ${envName("host")}
  --port PORT                   listen port, 0 = any free port (default 8080) ${envName("port")}
  --upstream embedded|ws://…    Tau host to serve; embedded = start the reference
                                host in-process on a free loopback port (default); repeatable:
                                several hosts, new sessions on the least-loaded one, /tau relayed
                                to the first (the variable takes URL,URL…) ${envName("upstream")}
  --upstream-token TOKEN        sent to the upstream as tau_token (and required by an embedded one)           ${envName("upstream-token")}
  --tools-config FILE           command tools offered to the agent (JSON)    ${envName("tools-config")}
  --approval-policy FILE        which command-tool calls run, are refused or need whom (YAML or JSON;
                                default: each session's approval mode decides) ${envName("approval-policy")}
  --audit DIR                   every command-tool call's receipt as JSON lines in DIR (rotated)
                                ${envName("audit")}
  --jsonrpc-member include|omit "jsonrpc":"2.0" in Ask responses (default include) ${envName("jsonrpc-member")}
  --default-cwd DIR             working directory of new Ask sessions (default: current) ${envName("default-cwd")}
  --workspace-root DIR          confine the working directories of Ask sessions, Codex threads and
                                ACP sessions to DIR and below; repeatable
                                (the variable takes DIR:DIR…; default: unconfined) ${envName("workspace-root")}
  --event-retention N           events kept per session (default 10000)      ${envName("event-retention")}
  --interaction-timeout-ms MS   unanswered approvals are denied after MS (default 300000) ${envName("interaction-timeout-ms")}
${STORE_USAGE}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default info) ${envName("log-level")}
${ACCESS_USAGE}
${LIMIT_USAGE}
  --drain-timeout MS            on SIGTERM/SIGINT, time in-flight requests and turns get to finish (default ${DEFAULT_DRAIN_TIMEOUT_MS}) ${envName("drain-timeout")}
  --sse-heartbeat-ms MS         keepalive comment interval on GET /rpc/events (default 15000) ${envName("sse-heartbeat-ms")}
  --socket PATH                 also serve Ask as NDJSON on this Unix socket, for local clients; a
                                stale socket file is replaced, ours is removed on exit (default: none) ${envName("socket")}
  --socket-mode MODE            file mode of the socket, its only access control: socket clients
                                present no token and act for tenant "default" (default 0600) ${envName("socket-mode")}
${RECORD_USAGE}
${INSPECTOR_USAGE}

Once listening it writes "tau-gateway listening on http://HOST:PORT" to stderr; logs are JSON
lines on stderr. SIGINT or SIGTERM drains (readiness 503, new work refused, work in flight
gets --drain-timeout; a second signal stops waiting; turns still running then are interrupted
and every client is told how each ended, within about 1 s), closes everything (WebSocket clients that
do not answer the close frame within what is left of the drain are cut off) and exits 0. Exit 1: the upstream cannot
be reached (with several: none of them can) or speaks another protocol version; exit 2: a setting is invalid.`;

const serveSettings = {
  host: { flag: "host", default: "127.0.0.1", parse: nonEmpty },
  port: { flag: "port", default: 8080, parse: integer(0, 65535) },
  ...upstreamSettings,
  ...storeSettings,
  ...bridgeSettings,
  ...logSettings,
  ...accessSettings,
  ...limitSettings,
  drainTimeout: { flag: "drain-timeout", default: DEFAULT_DRAIN_TIMEOUT_MS, parse: integer(0) },
  sseHeartbeatMs: { flag: "sse-heartbeat-ms", default: DEFAULT_SSE_HEARTBEAT_MS, parse: integer(1) },
  ...socketSettings,
  record: { flag: "record", parse: nonEmpty, alsoEnv: "TAU_GATEWAY_RECORD_DIR" },
  ...recordSettings,
  ...inspectorSettings,
};

export type ServeSettings = SettingValues<typeof serveSettings>;

export function runServe(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return exitStatus(() => serve(argv, io, env));
}

async function serve(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  const settings = readCommandSettings("serve", SERVE_USAGE, argv, env, serveSettings, io);
  const commandTools = await readCommandTools("serve", settings.toolsConfig, io);

  let tokens: TokenRegistry | undefined;
  try {
    tokens = await loadTokens(settings, settings.host);
  } catch (err) {
    io.stderr(`tau-gateway serve: ${(err as Error).message}\nRun "tau-gateway serve --help" for the options.\n`);
    return 2;
  }
  // Without tokens no caller has a principal, and with them no more approvers answer than the tokens
  // are for: a rule needing more would never let its calls run.
  const approvalPolicy = await readApprovalPolicy(
    "serve",
    settings.approvalPolicyFile,
    io,
    tokens ? { principals: tokens.principalIds() } : { withoutPrincipals: "this gateway has no tokens (give it --tokens-file)" },
  );

  const running = new Running();
  // Components start before the HTTP app (and its logger) exists; their lines are routed to it once it does.
  const log: Log = (level, message, fields) => (running.app ? pinoLog(running.app.log)(level, message, fields) : undefined);
  try {
    // Before anything that calls Tau, so every call is traced (when the OTEL_* variables ask for it).
    running.stopTracing = await startTracing(env, gatewayVersion(), log);
    running.tracingBudgetMs = tracingFlushBudget(settings.drainTimeout);
    await start({ ...settings, approvalPolicy }, commandTools, running, io, log, tokens);
  } catch (err) {
    await running.close();
    io.stderr(`tau-gateway serve: ${startupMessage(err)}\n`);
    return 1;
  }

  const signal = await nextStopSignal();
  running.app?.log.info({ signal, drainTimeoutMs: settings.drainTimeout }, "draining: refusing new work, waiting for work in flight");
  // A second signal stops waiting; what is still open is failed as at the deadline.
  const stopWaiting = onStopSignals(() => running.app?.drain.force());
  const outcome = await running.app?.drain.drain();
  stopWaiting();
  running.app?.log.info({ ...outcome }, "shutting down");
  await running.close();
  return 0;
}

/** The composition root of `serve`: the bridge stack (upstream hosts, bridge connections, core, every dialect's surface), then the HTTP front on it. */
async function start(settings: ServeSettings & { approvalPolicy?: ApprovalPolicy }, commandTools: CommandToolConfig[], running: Running, io: CommandIO, log: Log, tokens?: TokenRegistry): Promise<void> {
  const { stack } = running;
  const recording = settings.record === undefined ? undefined : await RecordingFolder.create(settings.record, recordLimits(settings), log);
  await stack.start({ ...settings, tenantWorkspaceRoots: tokens?.tenantWorkspaceRoots() }, commandTools, log);
  const config: GatewayConfig = {
    tauUpstream: { url: stack.url!, token: settings.upstreamToken },
    upstream: stack.upstream!,
    store: stack.store,
    dialects: stack.gatewayDialects(settings),
    sseHeartbeatMs: settings.sseHeartbeatMs,
    drainTimeoutMs: settings.drainTimeout,
    turns: stack.core,
    receipts: stack.receipts,
    roles: stack.core,
    logger: { level: settings.logLevel, stream: process.stderr },
    maxMessageBytes: settings.maxMessageBytes,
    limits: {
      maxConnections: settings.maxConnections,
      maxInflight: settings.maxInflight,
      maxBufferedBytes: settings.maxBufferedBytes,
      keepaliveMs: settings.keepaliveMs,
      idleTimeoutMs: settings.idleTimeoutMs,
      headersTimeoutMs: settings.headersTimeoutMs,
      requestTimeoutMs: settings.requestTimeoutMs,
      maxConnectionsPerAddress: settings.maxConnectionsPerAddress,
    },
    tokens,
    allowedOrigins: settings.allowedOrigins,
    allowedHosts: settings.allowedHosts === "*" ? "*" : allowedHostNames(settings.host, settings.allowedHosts),
    trustProxy: settings.trustProxy,
    recording,
    inspector: settings.inspector ? { hub: new InspectorHub(), listenHost: settings.host, hosts: settings.inspectorHosts, sessions: stack.core?.sessions, receipts: stack.receipts } : undefined,
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
  /** Exports the spans still buffered and stops tracing (a no-op when it is off). */
  stopTracing: StopTracing = async () => undefined;
  tracingBudgetMs = 0;

  async close(): Promise<void> {
    await this.app?.close().catch(() => undefined);
    await this.stack.close();
    await this.stopTracing(this.tracingBudgetMs).catch(() => undefined);
  }
}
