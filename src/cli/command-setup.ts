import { pino, type LevelWithSilent } from "pino";
import { loadApprovalPolicy, loadToolsConfig, type ApprovalPolicy, type CommandToolConfig, type PolicyReading } from "../bridge/interactions/index.js";
import { CommandExit, UsageError, type CommandIO } from "./io.js";
import type { Log } from "../shared/log.js";
import { UpstreamVersionError } from "../tau/upstream.js";
import { errorText } from "../shared/unknown-values.js";
import { readSettings, type SettingSpec, type SettingValues } from "./settings.js";

/**
 * The start of every long-running command: settings from flags and environment (`--help` prints
 * the usage and exits 0; a bad value prints what is wrong and exits 2) and the command tools file.
 */
export function readCommandSettings<S extends Record<string, SettingSpec<unknown>>>(
  command: string,
  usage: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  specs: S,
  io: CommandIO,
): SettingValues<S> {
  try {
    return readSettings(argv, env, specs);
  } catch (err) {
    if (err instanceof UsageError && err.exitCode === 0) {
      io.stdout(`${usage}\n`);
      throw new CommandExit(0);
    }
    io.stderr(`tau-gateway ${command}: ${(err as Error).message}\nRun "tau-gateway ${command} --help" for the options.\n`);
    throw new CommandExit(err instanceof UsageError ? err.exitCode : 2);
  }
}

export async function readCommandTools(command: string, path: string | undefined, io: CommandIO): Promise<CommandToolConfig[]> {
  if (path === undefined) return [];
  try {
    return await loadToolsConfig(path);
  } catch (err) {
    io.stderr(`tau-gateway ${command}: invalid --tools-config ${JSON.stringify(path)}: ${(err as Error).message}\n`);
    throw new CommandExit(2);
  }
}

/**
 * `--approval-policy FILE`, read and checked before anything starts (absent: undefined, the default
 * policy). `callers`: why no caller of this command has a principal, when none has, or the
 * principals callers can have; a rule they could never satisfy is refused
 * (docs/approvals.md#callers-without-a-principal).
 */
export async function readApprovalPolicy(command: string, path: string | undefined, io: CommandIO, callers: PolicyReading): Promise<ApprovalPolicy | undefined> {
  if (path === undefined) return undefined;
  try {
    return await loadApprovalPolicy(path, callers);
  } catch (err) {
    io.stderr(`tau-gateway ${command}: invalid --approval-policy ${JSON.stringify(path)}:\n${(err as Error).message}\n`);
    throw new CommandExit(2);
  }
}

/** The log of a command that serves on stdin/stdout, where stdout is the protocol's: JSON lines on stderr. */
export function stderrLog(command: string, level: LevelWithSilent): Log {
  const logger = pino({ level, base: { component: `tau-gateway-${command}` } }, pino.destination(2));
  return (lvl, message, fields) => (fields ? logger[lvl](fields, message) : logger[lvl](message));
}

/** What a command says on stderr when it cannot start serving. */
export function startupMessage(err: unknown): string {
  if (err instanceof UpstreamVersionError) return `refusing to serve: ${err.message}`;
  const message = errorText(err);
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") return `cannot listen: ${message}`;
  return message;
}
