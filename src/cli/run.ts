/** Command dispatch for the `tau-gateway` executable. */
import { runAcp } from "./acp.js";
import { runAppServer } from "./app-server.js";
import { runHost } from "./host.js";
import type { CommandIO } from "./io.js";
import { runServe } from "./serve.js";
import { runStdio } from "./stdio.js";
import { runValidate } from "./validate.js";

const USAGE = `usage: tau-gateway <command> [options]

Commands:
  host       run the embedded reference Tau host alone (see: tau-gateway host --help)
  serve      run the gateway (see: tau-gateway serve --help)
  stdio      the Ask JSON-RPC surface on stdin/stdout (see: tau-gateway stdio --help)
  app-server the Codex app-server protocol on stdin/stdout (see: tau-gateway app-server --help)
  acp        an Agent Client Protocol agent on stdin/stdout, for editors (see: tau-gateway acp --help)
  validate   check JSONL transcripts against the tau-gateway schema (see: tau-gateway validate --help)
  help       show this help

Run "tau-gateway <command> --help" for a command's options.`;

/** A command: its arguments, its process's streams and environment in; its exit status out. */
type Command = (argv: string[], io: CommandIO, env: NodeJS.ProcessEnv) => Promise<number>;

const commands: Record<string, Command> = {
  validate: runValidate,
  host: runHost,
  serve: runServe,
  stdio: runStdio,
  "app-server": runAppServer,
  acp: runAcp,
};

/**
 * Runs one command to completion and returns its exit status. Everything it touches of its
 * process comes in as arguments, so tests run commands in-process; only main.ts binds them to the
 * real process.
 */
export async function run(argv: string[], io: CommandIO, env: NodeJS.ProcessEnv): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    io.stderr(`tau-gateway: unknown command ${JSON.stringify(name)}\n${USAGE}\n`);
    return 2;
  }
  return command(rest, io, env);
}

