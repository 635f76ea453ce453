/** Command dispatch for the `tau-gateway` executable. */
import { DIALECTS } from "./dialects/index.js";
import type { CommandIO } from "./io.js";
import { gatewayVersion } from "../gateway/version.js";

/** A line of the command list: the name padded to the summaries' column. */
const line = (name: string, summary: string) => `  ${name.padEnd(10)} ${summary} (see: tau-gateway ${name} --help)`;

const USAGE = `usage: tau-gateway <command> [options]

Commands:
${line("host", "run the embedded reference Tau host alone")}
${line("serve", "run the gateway")}
${DIALECTS.map((dialect) => line(dialect.command, dialect.summary)).join("\n")}
${line("validate", "check JSONL transcripts against the tau-gateway schema")}
${line("schema", "schema diff OLD NEW: what a new schema bundle breaks for clients")}
  help       show this help (also --help)
  --version  print the version of tau-gateway

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
  // Each dialect's stdio command: the one skeleton, given the dialect.
  ...Object.fromEntries(
    DIALECTS.map((entry): [string, Command] => [
      entry.command,
      async (argv, io, env) => {
        const [{ runStdioCommand }, { loadDialect }] = await Promise.all([import("./stdio-command.js"), import("./dialects/loaded.js")]);
        return runStdioCommand(await loadDialect(entry), argv, io, env);
      },
    ]),
  ),
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
  if (name === "--version" || name === "-v" || name === "version") {
    io.stdout(`${gatewayVersion()}\n`);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    io.stderr(`tau-gateway: unknown command ${JSON.stringify(name)}\n${USAGE}\n`);
    return 2;
  }
  return command(rest, io, env);
}

