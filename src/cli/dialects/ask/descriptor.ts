import type { Readable, Writable } from "node:stream";
import { AskSurface } from "../../../ask/ask-surface.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../../gateway/config.js";
import { DEFAULT_DRAIN_TIMEOUT_MS, DrainController } from "../../../gateway/drain.js";
import { DEFAULT_LIMITS } from "../../../gateway/limits.js";
import { askGatewayDialect, type AskGatewayOptions } from "./gateway.js";
import { askRegistry } from "../../../registry/ask/index.js";
import type { Log } from "../../../shared/log.js";
import { attachAskJsonRpc, type AskJsonRpcOptions } from "../../../transports/ask-jsonrpc.js";
import { serveNdjson } from "../../../transports/ndjson-endpoint.js";
import type { NdjsonStreamOptions } from "../../../transports/ndjson-stream.js";
import { untilAborted } from "../../../transports/stop-signal.js";
import { UnixSocketListener } from "../../../transports/unix-socket-listener.js";
import { limitSettings } from "../../limit-settings.js";
import { RECORD_FILE_USAGE } from "../../record-settings.js";
import { REMOTE_USAGE } from "../../remote.js";
import { startupMessage } from "../../command-setup.js";
import { bridgeSettings, envName, socketSettings, SESSION_KEEPING_USAGE, STDIO_HOST_USAGE, STORE_USAGE } from "../../settings.js";
import { ASK_RELAY } from "./relay.js";
import type { DialectDescriptor, StdioRun } from "../descriptor.js";
import type { StdioSettingValues } from "../stdio-settings.js";

/** The Ask host's own variable for its socket, so a client that sets it finds ours. */
const ASK_SOCKET_VARIABLE = "ASK_APP_SERVER_SOCKET";

const USAGE = `usage: tau-gateway stdio [options]

Serves the Ask JSON-RPC surface as newline-delimited JSON on stdin/stdout, for clients that
spawn an app-server executable, and with --socket also on a Unix socket, for clients that attach to
it (all share the same sessions). Logs go to stderr as JSON lines.

${STDIO_HOST_USAGE}
  --jsonrpc-member include|omit "jsonrpc":"2.0" in responses (default include) ${envName("jsonrpc-member")}
  --default-cwd DIR             working directory of new sessions (default: current) ${envName("default-cwd")}
  --workspace-root DIR          confine session working directories to DIR and below; repeatable
                                (the variable takes DIR:DIR…; default: unconfined) ${envName("workspace-root")}
${SESSION_KEEPING_USAGE}
${STORE_USAGE}
${REMOTE_USAGE}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default warn) ${envName("log-level")}
  --max-inflight N              unanswered requests per connection; more are answered -32013
                                (default ${DEFAULT_LIMITS.maxInflight}) ${envName("max-inflight")}
  --max-message-bytes N         longest line; a longer one is skipped and answered -32600
                                (default ${DEFAULT_MAX_MESSAGE_BYTES}) ${envName("max-message-bytes")}
  --drain-timeout MS            time work in flight gets to finish on SIGTERM/SIGINT or once stdin
                                ends (default ${DEFAULT_DRAIN_TIMEOUT_MS}) ${envName("drain-timeout")}
${RECORD_FILE_USAGE}
  --socket PATH                 also serve on this Unix socket; a stale socket file is replaced,
                                ours is removed on exit (default: none) ${envName("socket")} or ${ASK_SOCKET_VARIABLE}
  --socket-mode MODE            file mode of the socket, its only access control (default 0600) ${envName("socket-mode")}
  --max-connections N           socket clients at once (default ${DEFAULT_LIMITS.maxConnections}) ${envName("max-connections")}
  --max-buffered-bytes N        unread bytes queued for a socket client before it is disconnected
                                (default ${DEFAULT_LIMITS.maxBufferedBytes}) ${envName("max-buffered-bytes")}
  --idle-timeout-ms MS          a socket client that sends no line within MS of connecting, or takes
                                none of its output for MS, is disconnected; 0 = never
                                (default ${DEFAULT_LIMITS.idleTimeoutMs}) ${envName("idle-timeout-ms")}

While stdout is not being read, stdin is not read either. It exits 0 once stdin ends or stdout is
gone and the work in flight is answered, or on SIGTERM/SIGINT after draining: requests arriving
meanwhile are answered -32012, work in flight gets --drain-timeout, a second signal stops waiting;
turns still running then are interrupted and their subscribers get turn.aborted. With the OTEL_*
variables set it exports a span of every call, as serve does (docs/operations.md).`;

const { jsonrpcMember, defaultCwd, workspaceRoots } = bridgeSettings;

const settings = {
  jsonrpcMember,
  defaultCwd,
  workspaceRoots,
  socket: { ...socketSettings.socket, alsoEnv: ASK_SOCKET_VARIABLE },
  socketMode: socketSettings.socketMode,
  maxConnections: limitSettings.maxConnections,
  maxBufferedBytes: limitSettings.maxBufferedBytes,
  idleTimeoutMs: limitSettings.idleTimeoutMs,
};

type AskStdioSettings = StdioSettingValues<typeof settings>;

/** The Ask JSON-RPC dialect: WebSocket `/rpc` with `POST /rpc`, `/rpc/events` and a socket on the gateway; `tau-gateway stdio`. */
export const askDialect: DialectDescriptor<AskSurface, typeof settings, AskGatewayOptions> = {
  registry: askRegistry,
  createSurface: (context) =>
    new AskSurface({ core: context.core, defaultCwd: context.defaultCwd, workspaceRoots: context.workspaceRoots, serverVersion: context.serverVersion, log: context.log }),
  closeSurface: (surface) => surface.close(),
  gatewayOptions: (serve) => ({
    jsonrpc: { jsonrpcMember: serve.jsonrpcMember ?? "include" },
    socket: serve.socket === undefined ? undefined : { path: serve.socket, mode: serve.socketMode ?? 0o600 },
  }),
  gateway: (surface, _mount, options) => askGatewayDialect(surface, options),
  command: { usage: USAGE, settings, relay: ASK_RELAY, serve },
};

/**
 * Ask on stdin/stdout, and on the socket when one is named. Its drain is the gateway's: requests
 * arriving while it drains are refused -32012, the turns in flight (open upstream requests) get the
 * drain timeout, and at the deadline those still running are interrupted and their subscribers told.
 */
/** One Ask connection on NDJSON: its framing and gates, and the stream's bounds. */
type AskNdjsonOptions = Omit<AskJsonRpcOptions, "transport"> & NdjsonStreamOptions;

/** Each peer is its own Ask connection (its own subscriptions and cursors), on the bridge core every other surface shares. */
const serveAskNdjson = (surface: AskSurface, input: Readable, output: Writable, options: AskNdjsonOptions) =>
  serveNdjson(input, output, (send, transport) => attachAskJsonRpc(surface, send, { ...options, transport }), options).stream;

async function serve(surface: AskSurface, run: StdioRun<AskStdioSettings>): Promise<number> {
  const { settings, io, log } = run;
  const drain = new DrainController({ timeoutMs: settings.drainTimeout });
  run.hurry.addEventListener("abort", () => drain.force(), { once: true });
  drain.addSource("upstream requests", () => run.upstream.openRequests);
  drain.atDeadline(async (budgetMs) => ({ ...(await run.core.endRunningTurns(budgetMs)) }));
  const connection = (): AskNdjsonOptions => ({
    jsonrpcMember: settings.jsonrpcMember,
    // The in-flight limit is per connection; the drain refuses new work once shutdown starts.
    gate: run.gate(drain.gate),
    maxLineBytes: settings.maxMessageBytes,
    onError: (err) => log("error", "Ask connection failed to handle a message", { err }),
  });
  let socket: UnixSocketListener | undefined;
  try {
    try {
      if (settings.socket !== undefined) socket = await listenOnSocket(surface, settings, connection, log);
    } catch (err) {
      io.stderr(`tau-gateway stdio: ${startupMessage(err)}\n`);
      return 1;
    }
    // Only the client on stdin/stdout is recorded (not the socket's).
    const stream = serveAskNdjson(surface, io.stdin, process.stdout, { ...connection(), recording: run.recording });
    const why = await Promise.race([stream.ended, untilAborted(run.stop).then(() => run.stop.reason as string)]);
    run.stopping();
    log("info", "draining: refusing new work, waiting for work in flight", { why, drainTimeoutMs: settings.drainTimeout });
    void socket?.stopAccepting();
    // Nobody reads the answers any more: there is nothing to wait for.
    if (why === "output closed") drain.force();
    const outcome = await drain.drain();
    const { flushed } = await stream.close();
    await socket?.close();
    log("info", "shutting down", { ...outcome, flushed });
    // A parent that neither reads stdout nor closes it would keep the unwritten answers (and so the
    // process) alive for ever: once everything else is closed, exit regardless.
    if (!flushed) setTimeout(() => process.exit(0), 100).unref();
    return 0;
  } finally {
    await socket?.close();
  }
}

/**
 * The Unix socket in the same process as stdio, as the Ask host has it: local clients attach to
 * the running process and share its sessions, each with its own subscriptions and cursors. Access
 * is the socket file's mode; clients act, like stdio, for no tenant.
 */
function listenOnSocket(surface: AskSurface, settings: AskStdioSettings, connection: () => AskNdjsonOptions, log: Log): Promise<UnixSocketListener> {
  return UnixSocketListener.listen({
    path: settings.socket!,
    mode: settings.socketMode,
    maxConnections: settings.maxConnections,
    onRefused: () => log("warn", "socket client refused: connection limit reached", { maxConnections: settings.maxConnections }),
    serve: (client) =>
      serveAskNdjson(surface, client, client, {
        ...connection(),
        maxBufferedBytes: settings.maxBufferedBytes,
        onSlowConsumer: () => log("warn", "slow socket client disconnected: too much data waiting unread", { maxBufferedBytes: settings.maxBufferedBytes }),
        firstLineTimeoutMs: settings.idleTimeoutMs,
        stallTimeoutMs: settings.idleTimeoutMs,
        onDeadline: (stage) =>
          log("info", stage === "idle" ? "socket client disconnected: it sent no line within the idle deadline" : "socket client disconnected: it took nothing of what waited for it within the idle deadline", {
            idleTimeoutMs: settings.idleTimeoutMs,
          }),
      }),
  }).then((listener) => {
    log("info", "Ask clients may attach on the Unix socket", { path: listener.path });
    return listener;
  });
}
