import type { AskBridge } from "../ask/ask-bridge.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../gateway/config.js";
import { DEFAULT_DRAIN_TIMEOUT_MS, DrainController } from "../gateway/drain.js";
import { DEFAULT_LIMITS } from "../gateway/limits.js";
import type { Log } from "../shared/log.js";
import { connectionGate } from "../transports/call-gates.js";
import { serveAskNdjson, type AskNdjsonOptions } from "../transports/ask-ndjson.js";
import { UnixSocketListener } from "../transports/unix-socket-listener.js";
import { BridgeStack } from "./bridge-stack.js";
import { readCommandSettings, readCommandTools, stderrLog } from "./command-setup.js";
import { exitStatus, type CommandIO } from "./io.js";
import { closeRecordingFile, openRecordingFile, RECORD_FILE_USAGE, recordFileSettings } from "./record-settings.js";
import { limitSettings } from "./limit-settings.js";
import { relayToGateway, REMOTE_USAGE, remoteSettings } from "./remote.js";
import { startupMessage } from "./serve.js";
import { bridgeSettings, envName, integer, logSettings, socketSettings, storeSettings, STORE_USAGE, upstreamSettings, type SettingValues } from "./settings.js";

/** The Ask host's own variable for its socket, so a client that sets it finds ours. */
const ASK_SOCKET_VARIABLE = "ASK_APP_SERVER_SOCKET";

export const STDIO_USAGE = `usage: tau-gateway stdio [options]

Serves the Ask JSON-RPC surface as newline-delimited JSON on stdin/stdout, for clients that
spawn an app-server executable, and with --socket also on a Unix socket, for clients that attach to
it (all share the same sessions). Logs go to stderr as JSON lines.

  --upstream embedded|ws://…    Tau host to serve (default embedded); repeatable: several hosts, new
                                sessions on the least-loaded (the variable takes URL,URL…) ${envName("upstream")}
  --upstream-token TOKEN        sent to the upstream as tau_token             ${envName("upstream-token")}
  --tools-config FILE           command tools offered to the agent (JSON)    ${envName("tools-config")}
  --jsonrpc-member include|omit "jsonrpc":"2.0" in responses (default include) ${envName("jsonrpc-member")}
  --default-cwd DIR             working directory of new sessions (default: current) ${envName("default-cwd")}
  --workspace-root DIR          confine session working directories to DIR and below; repeatable
                                (the variable takes DIR:DIR…; default: unconfined) ${envName("workspace-root")}
  --event-retention N           events kept per session (default 10000)      ${envName("event-retention")}
  --interaction-timeout-ms MS   unanswered approvals are denied after MS (default 300000) ${envName("interaction-timeout-ms")}
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

While stdout is not being read, stdin is not read either. It exits 0 once stdin ends or stdout is
gone and the work in flight is answered, or on SIGTERM/SIGINT after draining: requests arriving
meanwhile are answered -32012, work in flight gets --drain-timeout, a second signal stops waiting;
turns still running then are interrupted and their subscribers get turn.aborted.`;

const stdioSettings = {
  ...remoteSettings("ask"),
  ...upstreamSettings,
  ...storeSettings,
  ...bridgeSettings,
  // stdout belongs to the protocol and stderr is often shown to a user: only problems by default.
  logLevel: { ...logSettings.logLevel, default: "warn" as SettingValues<typeof logSettings>["logLevel"] },
  maxInflight: limitSettings.maxInflight,
  maxMessageBytes: limitSettings.maxMessageBytes,
  drainTimeout: { flag: "drain-timeout", default: DEFAULT_DRAIN_TIMEOUT_MS, parse: integer(0) },
  ...recordFileSettings,
  socket: { ...socketSettings.socket, alsoEnv: ASK_SOCKET_VARIABLE },
  socketMode: socketSettings.socketMode,
  maxConnections: limitSettings.maxConnections,
  maxBufferedBytes: limitSettings.maxBufferedBytes,
};

type StdioSettings = SettingValues<typeof stdioSettings>;

export function runStdio(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return exitStatus(() => stdio(argv, io, env));
}

async function stdio(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  const settings = readCommandSettings("stdio", STDIO_USAGE, argv, env, stdioSettings, io);
  if (settings.remote !== undefined) return relayToGateway("stdio", "ask", { ...settings, remote: settings.remote }, argv, io);
  const commandTools = await readCommandTools("stdio", settings.toolsConfig, io);
  const log = stderrLog("stdio", settings.logLevel);

  const recording = await openRecordingFile("stdio", settings, "ask", io, log);
  const stack = new BridgeStack();
  const drain = new DrainController({ timeoutMs: settings.drainTimeout });
  // Watched from the start: a signal during startup stops the command as soon as it is up.
  const signals = watchStopSignals(() => drain.force());
  let socket: UnixSocketListener | undefined;
  try {
    try {
      await stack.start(settings, commandTools, log);
      const upstream = stack.upstream!;
      // Turns in flight are open upstream requests (Tau answers session.submit when the turn settles).
      drain.addSource("upstream requests", () => upstream.openRequests);
      // At the deadline the turns still running are interrupted and their subscribers told so.
      const core = stack.core!;
      drain.atDeadline(async (budgetMs) => ({ ...(await core.endRunningTurns(budgetMs)) }));
      if (settings.socket !== undefined) socket = await listenOnSocket(stack.bridge!, settings, drain, log);
    } catch (err) {
      io.stderr(`tau-gateway stdio: ${startupMessage(err)}\n`);
      return 1;
    }

    // Only the client on stdin/stdout is recorded (not the socket's).
    const stream = serveAskNdjson(stack.bridge!, io.stdin, process.stdout, { ...connectionOptions(settings, drain, log), recording });
    const why = await Promise.race([stream.ended, signals.first]);
    signals.stopping();
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
    signals.stop();
    await socket?.close();
    await stack.close();
    await closeRecordingFile(recording);
  }
}

/**
 * SIGINT and SIGTERM for the command's lifetime: the first one settles `first` (the command starts
 * stopping); one that arrives once it is stopping anyway (a second signal, or one after stdin
 * ended) calls `hurry`.
 */
function watchStopSignals(hurry: () => void): { first: Promise<NodeJS.Signals>; stopping(): void; stop(): void } {
  let stopping = false;
  let settleFirst!: (signal: NodeJS.Signals) => void;
  const first = new Promise<NodeJS.Signals>((resolve) => (settleFirst = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return hurry();
    stopping = true;
    settleFirst(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    first,
    stopping: () => void (stopping = true),
    stop: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

/** What every connection of the command gets: stdin/stdout and each socket client alike. */
function connectionOptions(settings: StdioSettings, drain: DrainController, log: Log): AskNdjsonOptions {
  return {
    jsonrpcMember: settings.jsonrpcMember,
    // The in-flight limit is per connection; the drain refuses new work once shutdown starts.
    gate: connectionGate("ask", { maxInflight: settings.maxInflight, drain: drain.gate }),
    maxLineBytes: settings.maxMessageBytes,
    onError: (err) => log("error", "Ask connection failed to handle a message", { err }),
  };
}

/**
 * The Unix socket in the same process as stdio, as the Ask host has it: local clients attach to
 * the running process and share its sessions, each with its own subscriptions and cursors. Access
 * is the socket file's mode; clients act, like stdio, for no tenant.
 */
function listenOnSocket(bridge: AskBridge, settings: StdioSettings, drain: DrainController, log: Log): Promise<UnixSocketListener> {
  return UnixSocketListener.listen({
    path: settings.socket!,
    mode: settings.socketMode,
    maxConnections: settings.maxConnections,
    onRefused: () => log("warn", "socket client refused: connection limit reached", { maxConnections: settings.maxConnections }),
    serve: (client) =>
      serveAskNdjson(bridge, client, client, {
        ...connectionOptions(settings, drain, log),
        maxBufferedBytes: settings.maxBufferedBytes,
        onSlowConsumer: () => log("warn", "slow socket client disconnected: too much data waiting unread", { maxBufferedBytes: settings.maxBufferedBytes }),
      }),
  }).then((listener) => {
    log("info", "Ask clients may attach on the Unix socket", { path: listener.path });
    return listener;
  });
}
