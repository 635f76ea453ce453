import { DEFAULT_DRAIN_TIMEOUT_MS } from "../gateway/drain.js";
import { serveAcpStdio } from "../transports/acp-stdio.js";
import { connectionGate } from "../transports/call-gates.js";
import { BridgeStack } from "./bridge-stack.js";
import { readCommandSettings, readCommandTools, stderrLog } from "./command-setup.js";
import { exitStatus, type CommandIO } from "./io.js";
import { limitSettings, STDIO_LIMIT_USAGE } from "./limit-settings.js";
import { closeRecordingFile, openRecordingFile, RECORD_FILE_USAGE, recordFileSettings } from "./record-settings.js";
import { relayToGateway, REMOTE_USAGE, remoteSettings } from "./remote.js";
import { startupMessage } from "./serve.js";
import { bridgeSettings, envName, integer, logSettings, storeSettings, STORE_USAGE, upstreamSettings, type SettingValues } from "./settings.js";

export const ACP_USAGE = `usage: tau-gateway acp [options]

An Agent Client Protocol (ACP v1) agent on stdin/stdout, for editors that spawn one (Zed's
agent_servers, acpx, …): newline-delimited JSON-RPC, logs on stderr as JSON lines. Ends when
stdin closes or on SIGTERM/SIGINT, once requests in flight are answered (a prompt still running
after --drain-timeout is interrupted).

  --upstream embedded|ws://…    Tau host to serve (default embedded); repeatable: several hosts, new
                                sessions on the least-loaded (the variable takes URL,URL…) ${envName("upstream")}
  --upstream-token TOKEN        sent to the upstream as tau_token             ${envName("upstream-token")}
  --tools-config FILE           command tools offered to the agent (JSON)    ${envName("tools-config")}
  --event-retention N           events kept per session (default 10000)      ${envName("event-retention")}
  --interaction-timeout-ms MS   unanswered approvals are denied after MS (default 300000) ${envName("interaction-timeout-ms")}
${STORE_USAGE}
  --drain-timeout MS            time a prompt in flight gets once input ends (default ${DEFAULT_DRAIN_TIMEOUT_MS}) ${envName("drain-timeout")}
${STDIO_LIMIT_USAGE}
${RECORD_FILE_USAGE}
${REMOTE_USAGE}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default warn) ${envName("log-level")}`;

const { toolsConfig, eventRetention, interactionTimeoutMs } = bridgeSettings;

const acpSettings = {
  ...remoteSettings("acp"),
  ...upstreamSettings,
  ...storeSettings,
  toolsConfig,
  eventRetention,
  interactionTimeoutMs,
  drainTimeout: { flag: "drain-timeout", default: DEFAULT_DRAIN_TIMEOUT_MS, parse: integer(0) },
  ...recordFileSettings,
  maxInflight: limitSettings.maxInflight,
  maxMessageBytes: limitSettings.maxMessageBytes,
  // stdout belongs to the protocol and stderr is often shown to a user: only problems by default.
  logLevel: { ...logSettings.logLevel, default: "warn" as SettingValues<typeof logSettings>["logLevel"] },
};

export function runAcp(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return exitStatus(() => acp(argv, io, env));
}

async function acp(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  const settings = readCommandSettings("acp", ACP_USAGE, argv, env, acpSettings, io);
  if (settings.remote !== undefined) return relayToGateway("acp", "acp", { ...settings, remote: settings.remote }, argv, io);
  const commandTools = await readCommandTools("acp", settings.toolsConfig, io);
  const log = stderrLog("acp", settings.logLevel);

  const recording = await openRecordingFile("acp", settings, "acp", io, log);
  const stack = new BridgeStack();
  try {
    // Every ACP session names its own cwd; the Ask default is never used here.
    await stack.start({ ...settings, defaultCwd: process.cwd() }, commandTools, log);
  } catch (err) {
    await stack.close();
    io.stderr(`tau-gateway acp: ${startupMessage(err)}\n`);
    return 1;
  }
  // A signal ends the input as EOF would: work in flight is answered (or interrupted), then the
  // process exits. Listening until then keeps a repeated signal from killing it half-way.
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    await serveAcpStdio(stack.acp!, io.stdin, process.stdout, {
      drainTimeoutMs: settings.drainTimeout,
      maxLineBytes: settings.maxMessageBytes,
      gate: connectionGate("acp", { maxInflight: settings.maxInflight }),
      stop: stopping.signal,
      onError: (err) => log("error", "ACP connection failed to handle a message", { err }),
      recording,
    });
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await stack.close();
    await closeRecordingFile(recording);
  }
  return 0;
}
