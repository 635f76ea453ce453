import { DEFAULT_DRAIN_TIMEOUT_MS } from "../gateway/drain.js";
import { connectionGate } from "../transports/call-gates.js";
import { serveCodexStdio } from "../transports/codex-stdio.js";
import { BridgeStack } from "./bridge-stack.js";
import { readCommandSettings, readCommandTools, stderrLog } from "./command-setup.js";
import { exitStatus, type CommandIO } from "./io.js";
import { limitSettings, STDIO_LIMIT_USAGE } from "./limit-settings.js";
import { closeRecordingFile, openRecordingFile, RECORD_FILE_USAGE, recordFileSettings } from "./record-settings.js";
import { relayToGateway, REMOTE_USAGE, remoteSettings } from "./remote.js";
import { startupMessage } from "./serve.js";
import { bridgeSettings, envName, integer, logSettings, storeSettings, STORE_USAGE, upstreamSettings, type SettingValues } from "./settings.js";

export const APP_SERVER_USAGE = `usage: tau-gateway app-server [options]

Serves the Codex app-server protocol (v2) as newline-delimited JSON on stdin/stdout, so a client
that spawns "<codexPath> app-server" runs it when given the tau-gateway executable. A spawning
client passes no flags: every option is read from its environment variable too. Logs go to
stderr as JSON lines. Ends when stdin closes (once every request received is answered), or on
SIGTERM/SIGINT (requests in flight then get --drain-timeout to be answered, and turns still running
are interrupted, each reported with turn/completed, before the output closes).

  --upstream embedded|ws://…    Tau host to serve (default embedded); repeatable: several hosts, new
                                sessions on the least-loaded (the variable takes URL,URL…) ${envName("upstream")}
  --upstream-token TOKEN        sent to the upstream as tau_token             ${envName("upstream-token")}
  --tools-config FILE           command tools offered to the agent (JSON)    ${envName("tools-config")}
  --default-cwd DIR             working directory of threads started without one (default: current) ${envName("default-cwd")}
  --event-retention N           events kept per session (default 10000)      ${envName("event-retention")}
  --interaction-timeout-ms MS   unanswered approvals are denied after MS (default 300000) ${envName("interaction-timeout-ms")}
  --drain-timeout MS            time requests in flight get once input ends (default ${DEFAULT_DRAIN_TIMEOUT_MS}) ${envName("drain-timeout")}
${STDIO_LIMIT_USAGE}
${RECORD_FILE_USAGE}
${STORE_USAGE}
${REMOTE_USAGE}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default warn) ${envName("log-level")}`;

// Codex's wire never carries "jsonrpc", so the Ask setting for it has no place here.
const { jsonrpcMember: _askOnly, ...codexBridgeSettings } = bridgeSettings;

const appServerSettings = {
  ...remoteSettings("codex"),
  ...upstreamSettings,
  ...storeSettings,
  ...codexBridgeSettings,
  drainTimeout: { flag: "drain-timeout", default: DEFAULT_DRAIN_TIMEOUT_MS, parse: integer(0) },
  ...recordFileSettings,
  maxInflight: limitSettings.maxInflight,
  maxMessageBytes: limitSettings.maxMessageBytes,
  // stdout belongs to the protocol and stderr is often shown to a user: only problems by default.
  logLevel: { ...logSettings.logLevel, default: "warn" as SettingValues<typeof logSettings>["logLevel"] },
};

export function runAppServer(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return exitStatus(() => appServer(argv, io, env));
}

async function appServer(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  const settings = readCommandSettings("app-server", APP_SERVER_USAGE, argv, env, appServerSettings, io);
  if (settings.remote !== undefined) return relayToGateway("app-server", "codex", { ...settings, remote: settings.remote }, argv, io);
  const commandTools = await readCommandTools("app-server", settings.toolsConfig, io);
  const log = stderrLog("app-server", settings.logLevel);

  const recording = await openRecordingFile("app-server", settings, "codex", io, log);
  const stack = new BridgeStack();
  try {
    await stack.start(settings, commandTools, log);
  } catch (err) {
    await stack.close();
    io.stderr(`tau-gateway app-server: ${startupMessage(err)}\n`);
    return 1;
  }
  // A signal ends the input: requests already received are still answered, then everything closes.
  const stopping = new AbortController();
  const stop = () => {
    stopping.abort();
    io.stdin.destroy();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    await serveCodexStdio(stack.codex!, io.stdin, process.stdout, {
      log,
      stop: stopping.signal,
      drainTimeoutMs: settings.drainTimeout,
      maxLineBytes: settings.maxMessageBytes,
      gate: connectionGate("codex", { maxInflight: settings.maxInflight }),
      recording,
      // A signal interrupts the turns still running; the client hears each end (turn/completed, interrupted).
      endTurns: (budgetMs) => stack.core!.endRunningTurns(budgetMs),
    });
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await stack.close();
    await closeRecordingFile(recording);
  }
  return 0;
}
