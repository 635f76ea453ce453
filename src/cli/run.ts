/** Command dispatch for the `tau-gateway` executable. */
import type { CommandIO } from "./io.js";

const USAGE = `usage: tau-gateway <command> [options]

Commands:
  host       run the embedded reference Tau host alone (see: tau-gateway host --help)
  serve      run the gateway (see: tau-gateway serve --help)
  stdio      the Ask JSON-RPC surface on stdin/stdout (see: tau-gateway stdio --help)
  app-server the Codex app-server protocol on stdin/stdout (see: tau-gateway app-server --help)
  acp        an Agent Client Protocol agent on stdin/stdout, for editors (see: tau-gateway acp --help)
  validate   check JSONL transcripts against the tau-gateway schema (see: tau-gateway validate --help)
  schema     schema diff OLD NEW: what a new schema bundle breaks for clients (see: tau-gateway schema --help)
  help       show this help

Run "tau-gateway <command> --help" for a command's options.`;

/** A command: its arguments, its process's streams and environment in; its exit status out. */
type Command = (argv: string[], io: CommandIO, env: NodeJS.ProcessEnv) => Promise<number>;

/**
 * Each command's module is loaded when that command runs: loading is most of a short command's
 * time, and `validate` needs neither the HTTP server nor the host that `serve` loads.
 */
const commands: Record<string, Command> = {
  validate: async (argv, io) => (await import("./validate.js")).runValidate(argv, io),
  schema: async (argv, io) => (await import("./schema.js")).runSchema(argv, io),
  host: async (argv, io, env) => (await import("./host.js")).runHost(argv, io, env),
  serve: async (argv, io, env) => (await import("./serve.js")).runServe(argv, io, env),
  stdio: async (argv, io, env) => (await import("./stdio.js")).runStdio(argv, io, env),
  "app-server": async (argv, io, env) => (await import("./app-server.js")).runAppServer(argv, io, env),
  acp: async (argv, io, env) => (await import("./acp.js")).runAcp(argv, io, env),
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

