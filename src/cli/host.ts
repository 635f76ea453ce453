import { accessSync, constants, mkdirSync } from "node:fs";
import { parseArgs } from "node:util";
import { startTauHost } from "../host/index.js";
import { UsageError, type CommandIO } from "./io.js";
import { nextStopSignal } from "./stop-signals.js";

export const HOST_USAGE = `usage: tau-gateway host [--host HOST] [--port PORT] [--auth-token TOKEN] [--state-dir DIR] [--stream-delay-ms MS]

Runs the embedded reference Tau host (session protocol v18) with its scripted agent, over
WebSocket, until SIGINT or SIGTERM.

  --host HOST            interface to listen on (default 127.0.0.1)
  --port PORT            port, 0-65535; 0 picks a free one (default 8787)
  --auth-token TOKEN     require ?tau_token=TOKEN (default: $TAU_WS_AUTH_TOKEN; unset = no auth)
  --state-dir DIR        persist sessions as JSON files in DIR (default: in memory)
  --stream-delay-ms MS   pause between streamed reply chunks (default 0)

Once listening it writes one line to stderr: tau host listening on ws://HOST:PORT`;

interface HostCommandOptions {
  host: string;
  port: number;
  authToken?: string;
  stateDir?: string;
  streamDelayMs: number;
}

function parse(argv: string[], env: NodeJS.ProcessEnv): HostCommandOptions {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    strict: true,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "auth-token": { type: "string" },
      "state-dir": { type: "string" },
      "stream-delay-ms": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) throw new UsageError("", 0);
  const host = values.host ?? "127.0.0.1";
  if (host === "") throw new UsageError("--host must not be empty");
  const port = wholeNumber("--port", values.port ?? "8787", 65535);
  const streamDelayMs = wholeNumber("--stream-delay-ms", values["stream-delay-ms"] ?? "0", 60_000);
  const authToken = values["auth-token"] ?? (env.TAU_WS_AUTH_TOKEN || undefined);
  const stateDir = values["state-dir"];
  if (stateDir === "") throw new UsageError("--state-dir must not be empty");
  return { host, port, authToken, stateDir, streamDelayMs };
}

function wholeNumber(flag: string, text: string, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) > max) throw new UsageError(`${flag} must be an integer from 0 to ${max} (got ${JSON.stringify(text)})`);
  return Number(text);
}

/** `tau-gateway host`: runs until SIGINT/SIGTERM, then shuts down cleanly and returns 0. */
export async function runHost(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  let options: HostCommandOptions;
  try {
    options = parse(argv, env);
  } catch (err) {
    const code = err instanceof UsageError ? err.exitCode : 2;
    if (code === 0) {
      io.stdout(`${HOST_USAGE}\n`);
      return 0;
    }
    io.stderr(`tau-gateway host: ${(err as Error).message}\n${HOST_USAGE}\n`);
    return code;
  }
  if (options.stateDir !== undefined) {
    // Checked first, so an unusable folder is named with its cause instead of failing later as something else.
    try {
      mkdirSync(options.stateDir, { recursive: true });
      accessSync(options.stateDir, constants.R_OK | constants.W_OK);
    } catch (err) {
      io.stderr(`tau-gateway host: cannot use --state-dir ${JSON.stringify(options.stateDir)}: ${(err as Error).message}\n`);
      return 1;
    }
  }
  let host;
  try {
    host = await startTauHost({
      host: options.host,
      port: options.port,
      authToken: options.authToken,
      stateDir: options.stateDir,
      streamDelayMs: options.streamDelayMs,
    });
  } catch (err) {
    io.stderr(`tau-gateway host: cannot listen on ${options.host}:${options.port}: ${(err as Error).message}\n`);
    return 1;
  }
  io.stderr(`tau host listening on ${host.url}\n`);
  await nextStopSignal();
  await host.close();
  return 0;
}
