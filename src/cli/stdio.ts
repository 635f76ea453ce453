import { pino } from "pino";
import type { Log } from "../shared/log.js";
import { serveAskStdio } from "../transports/ask-stdio.js";
import { BridgeStack } from "./bridge-stack.js";
import { readCommandSettings, readCommandTools } from "./command-setup.js";
import { exitStatus, type CommandIO } from "./io.js";
import { startupMessage } from "./serve.js";
import { bridgeSettings, envName, logSettings, upstreamSettings, type SettingValues } from "./settings.js";

export const STDIO_USAGE = `usage: tau-gateway stdio [options]

Serves the Ask JSON-RPC surface as newline-delimited JSON on stdin/stdout, for clients that
spawn an app-server executable. Logs go to stderr as JSON lines. Ends when stdin closes.

  --upstream embedded|ws://…    Tau host to serve (default embedded)          ${envName("upstream")}
  --upstream-token TOKEN        sent to the upstream as tau_token             ${envName("upstream-token")}
  --tools-config FILE           command tools offered to the agent (JSON)    ${envName("tools-config")}
  --jsonrpc-member include|omit "jsonrpc":"2.0" in responses (default include) ${envName("jsonrpc-member")}
  --default-cwd DIR             working directory of new sessions (default: current) ${envName("default-cwd")}
  --workspace-root DIR          confine session working directories to DIR and below; repeatable
                                (the variable takes DIR:DIR…; default: unconfined) ${envName("workspace-root")}
  --event-retention N           events kept per session (default 10000)      ${envName("event-retention")}
  --interaction-timeout-ms MS   unanswered approvals are denied after MS (default 300000) ${envName("interaction-timeout-ms")}
  --log-level LEVEL             fatal|error|warn|info|debug|trace|silent (default warn) ${envName("log-level")}`;

const stdioSettings = {
  ...upstreamSettings,
  ...bridgeSettings,
  // stdout belongs to the protocol and stderr is often shown to a user: only problems by default.
  logLevel: { ...logSettings.logLevel, default: "warn" as SettingValues<typeof logSettings>["logLevel"] },
};

export function runStdio(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return exitStatus(() => stdio(argv, io, env));
}

async function stdio(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  const settings = readCommandSettings("stdio", STDIO_USAGE, argv, env, stdioSettings, io);
  const commandTools = await readCommandTools("stdio", settings.toolsConfig, io);
  const logger = pino({ level: settings.logLevel, base: { component: "tau-gateway-stdio" } }, pino.destination(2));
  const log: Log = (level, message, fields) => (fields ? logger[level](fields, message) : logger[level](message));

  const stack = new BridgeStack();
  try {
    await stack.start(settings, commandTools, log);
  } catch (err) {
    await stack.close();
    io.stderr(`tau-gateway stdio: ${startupMessage(err)}\n`);
    return 1;
  }
  const stop = () => io.stdin.destroy();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    await serveAskStdio(stack.bridge!, io.stdin, process.stdout, { jsonrpcMember: settings.jsonrpcMember });
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await stack.close();
  }
  return 0;
}
