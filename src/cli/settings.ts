import { statSync } from "node:fs";
import { delimiter, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_EVENT_MAX_AGE_MS, DEFAULT_LEASE_TTL_MS, parseStoreTarget } from "../store/index.js";
import { UsageError } from "./io.js";

/**
 * Command settings from flags and environment variables. Every flag `--some-flag` also reads
 * `TAU_GATEWAY_SOME_FLAG`; a flag given on the command line wins. A bad value is a usage error
 * (exit 2) that names the setting as the user wrote it (flag or variable) and the value.
 */

export interface SettingSpec<T> {
  /** Flag name without the leading dashes, e.g. "port". */
  flag: string;
  /** Used when neither the flag nor the variable is set; undefined = the setting is optional. */
  default?: T | (() => T);
  /** Turns the text into a value, or throws an Error whose message says what is expected. */
  parse(text: string): T;
  /** A switch (`--flag`, no value): given on the command line it reads as "true"; its variable takes true/false/1/0/yes/no. */
  switch?: boolean;
  /** A credential: an error about it never repeats the value. */
  secret?: boolean;
  /** How an error shows the value, when it may hold a credential (a URL's password or query); default: as given. */
  shown?(text: string): string;
  /**
   * A variable read when neither the flag nor `TAU_GATEWAY_…` is set: the name another program
   * uses for the same setting, for clients that set it when they spawn us in its place.
   */
  alsoEnv?: string;
  /**
   * The flag may be given several times; its variable holds the values separated like PATH (`:`).
   * The value is the list of every one parsed (empty when none is given).
   */
  repeatable?: boolean;
  /** What separates a repeatable setting's values in its variable (default `:`, as in PATH). */
  separator?: string;
  /** Checks a repeatable setting's values together; throws an Error saying what is wrong. */
  checkList?(values: T[]): void;
}

export type SettingValues<S extends Record<string, SettingSpec<unknown>>> = {
  [K in keyof S]: S[K] extends { parse(text: string): infer T }
    ? S[K] extends { repeatable: true }
      ? T[]
      : S[K] extends { default: unknown }
        ? T
        : T | undefined
    : never;
};

export const envName = (flag: string) => `TAU_GATEWAY_${flag.replace(/-/g, "_").toUpperCase()}`;

/** Parses `argv` (no positionals) against `specs`; `--help` throws UsageError with exit code 0. */
export function readSettings<S extends Record<string, SettingSpec<unknown>>>(argv: string[], env: NodeJS.ProcessEnv, specs: S): SettingValues<S> {
  const options: Record<string, { type: "string"; multiple?: boolean } | { type: "boolean"; short?: string }> = { help: { type: "boolean", short: "h" } };
  for (const spec of Object.values(specs)) options[spec.flag] = spec.switch ? { type: "boolean" } : { type: "string", ...(spec.repeatable ? { multiple: true } : {}) };
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) throw new UsageError("", 0);

  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(specs)) {
    const fromFlag = values[spec.flag];
    // Our variable, else the other program's name for the setting; an empty value counts as unset.
    const variable = [envName(spec.flag), spec.alsoEnv].find((name) => name !== undefined && (env[name] ?? "") !== "") ?? envName(spec.flag);
    if (spec.repeatable) {
      out[key] = readRepeated(spec, Array.isArray(fromFlag) ? fromFlag : undefined, env[variable], variable);
      continue;
    }
    const [text, source] =
      typeof fromFlag === "string" ? [fromFlag, `--${spec.flag}`] : fromFlag === true ? ["true", `--${spec.flag}`] : [env[variable], variable];
    if (text === undefined || (source === variable && text === "")) {
      out[key] = typeof spec.default === "function" ? (spec.default as () => unknown)() : spec.default;
      continue;
    }
    try {
      out[key] = spec.parse(text);
    } catch (err) {
      throw new UsageError(`invalid ${source} ${shownValue(spec, text)}: ${(err as Error).message}`);
    }
  }
  return out as SettingValues<S>;
}

const shownValue = (spec: SettingSpec<unknown>, text: string): string =>
  spec.secret ? "(value not shown)" : JSON.stringify(spec.shown ? spec.shown(text) : text);

/** The values of a repeatable setting: every flag given, else the variable's list, else none. */
function readRepeated(spec: SettingSpec<unknown>, fromFlags: string[] | undefined, fromVariable: string | undefined, variable: string): unknown[] {
  const [texts, source] =
    fromFlags && fromFlags.length > 0
      ? [fromFlags, `--${spec.flag}`]
      : [(fromVariable ?? "").split(spec.separator ?? delimiter).filter((text) => text !== ""), variable];
  const values = texts.map((text) => {
    try {
      return spec.parse(text);
    } catch (err) {
      throw new UsageError(`invalid ${source} ${shownValue(spec, text)}: ${(err as Error).message}`);
    }
  });
  try {
    spec.checkList?.(values);
  } catch (err) {
    throw new UsageError(`invalid ${source}: ${(err as Error).message}`);
  }
  return values;
}

// --- value parsers ---------------------------------------------------------------------------

export function integer(min: number, max = Number.MAX_SAFE_INTEGER): (text: string) => number {
  return (text) => {
    if (!/^\d+$/.test(text.trim())) throw new Error(`must be an integer from ${min} to ${max}`);
    const value = Number(text.trim());
    if (value < min || value > max) throw new Error(`must be an integer from ${min} to ${max}`);
    return value;
  };
}

export function oneOf<T extends string>(...choices: T[]): (text: string) => T {
  return (text) => {
    if (!(choices as string[]).includes(text)) throw new Error(`must be one of ${choices.join(", ")}`);
    return text as T;
  };
}

/** A switch's value (see SettingSpec.switch). */
export function yesNo(text: string): boolean {
  const value = text.trim().toLowerCase();
  if (["true", "1", "yes"].includes(value)) return true;
  if (["false", "0", "no"].includes(value)) return false;
  throw new Error("must be true or false (or 1/0, yes/no)");
}

export function nonEmpty(text: string): string {
  if (text.trim() === "") throw new Error("must not be empty");
  return text;
}

export function existingDirectory(text: string): string {
  const path = resolve(text);
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    throw new Error("no such directory");
  }
  if (!isDirectory) throw new Error("not a directory");
  return path;
}

/** The longest path a Unix socket address holds (sun_path on Linux, without its NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/** Where a Unix socket is to be bound: made absolute, and short enough for a socket address. */
export function socketPath(text: string): string {
  if (text.trim() === "") throw new Error("must not be empty");
  const path = resolve(text);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) throw new Error(`is too long for a Unix socket (at most ${MAX_SOCKET_PATH_BYTES} bytes once made absolute)`);
  return path;
}

/** A file mode in octal: `600`, `0600` or `0o600`. */
export function fileMode(text: string): number {
  const digits = /^(?:0o?)?([0-7]{3})$/.exec(text.trim())?.[1];
  if (digits === undefined) throw new Error("must be an octal file mode such as 0600");
  return parseInt(digits, 8);
}

/** `embedded` or a ws:// / wss:// URL of a Tau host. */
export function upstreamTarget(text: string): "embedded" | string {
  if (text === "embedded") return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error("must be embedded or a ws:// or wss:// URL");
  }
  if (url.protocol !== "ws:" && url.protocol !== "wss:") throw new Error("must be embedded or a ws:// or wss:// URL");
  if (url.searchParams.has("tau_token")) throw new Error("put the token in --upstream-token, not in the URL");
  return text;
}

// --- the settings shared by the commands that reach a Tau upstream ---------------------------

/** Several upstreams are several Tau hosts: each once, and `embedded` only on its own. */
export function distinctHosts(targets: string[]): void {
  if (targets.length > 1 && targets.includes("embedded")) throw new Error("embedded cannot be combined with other upstreams");
  const duplicate = targets.find((target, index) => targets.indexOf(target) !== index);
  if (duplicate !== undefined) throw new Error(`${JSON.stringify(duplicate)} is given twice`);
}

export const upstreamSettings = {
  /** None given: the embedded host. URLs contain colons, so the variable's list is comma-separated. */
  upstream: { flag: "upstream", repeatable: true as const, separator: ",", parse: upstreamTarget, checkList: distinctHosts },
  upstreamToken: { flag: "upstream-token", parse: nonEmpty, secret: true },
} satisfies Record<string, SettingSpec<unknown>>;

/** `memory` or `redis://HOST:PORT[/DB]`, checked here so a bad one is a usage error. */
export function storeTarget(text: string): string {
  parseStoreTarget(text);
  return text;
}

/** Where the commands that host sessions keep what gateway replicas share (see docs/deployment.md, "Replicas and a shared store"). */
export const storeSettings = {
  store: { flag: "store", default: "memory", parse: storeTarget },
  storeLeaseMs: { flag: "store-lease-ms", default: DEFAULT_LEASE_TTL_MS, parse: integer(100) },
  eventMaxAgeMs: { flag: "event-max-age-ms", default: DEFAULT_EVENT_MAX_AGE_MS, parse: integer(0) },
} satisfies Record<string, SettingSpec<unknown>>;

/** The usage lines of storeSettings. */
/** The Tau hosts a stdio command serves and the tools it offers them: the same lines in each command's usage. */
export const STDIO_HOST_USAGE = `  --upstream embedded|ws://…    Tau host to serve (default embedded); repeatable: several hosts, new
                                sessions on the least-loaded (the variable takes URL,URL…) ${envName("upstream")}
  --upstream-token TOKEN        sent to the upstream as tau_token             ${envName("upstream-token")}
  --tools-config FILE           command tools offered to the agent (JSON)    ${envName("tools-config")}
  --approval-policy FILE        which command-tool calls run, are refused or need whom (YAML or JSON;
                                default: each session's approval mode decides) ${envName("approval-policy")}
  --audit DIR                   every command-tool call's receipt as JSON lines in DIR (rotated)
                                ${envName("audit")}`;

/** What a session keeps and how long an approval waits: the same lines in each stdio command's usage. */
export const SESSION_KEEPING_USAGE = `  --event-retention N           events kept per session (default 10000)      ${envName("event-retention")}
  --interaction-timeout-ms MS   unanswered approvals are denied after MS (default 300000) ${envName("interaction-timeout-ms")}`;

export const STORE_USAGE = `  --store memory|redis://HOST:PORT[/DB]
                                what gateway replicas share: memory = this process only (default);
                                redis = session logs and host leases in Redis ${envName("store")}
  --store-lease-ms MS           with redis: how long a replica that stopped renewing keeps its Tau
                                host before another takes over (default ${DEFAULT_LEASE_TTL_MS}) ${envName("store-lease-ms")}
  --event-max-age-ms MS         with redis: events older than MS are dropped and an idle session log
                                expires (0 = never; default ${DEFAULT_EVENT_MAX_AGE_MS}) ${envName("event-max-age-ms")}`;

export const bridgeSettings = {
  toolsConfig: { flag: "tools-config", parse: nonEmpty },
  approvalPolicyFile: { flag: "approval-policy", parse: nonEmpty },
  auditDir: { flag: "audit", parse: nonEmpty },
  jsonrpcMember: { flag: "jsonrpc-member", default: "include" as "include" | "omit", parse: oneOf("include", "omit") },
  defaultCwd: { flag: "default-cwd", default: () => process.cwd(), parse: existingDirectory },
  workspaceRoots: { flag: "workspace-root", repeatable: true as const, parse: existingDirectory },
  eventRetention: { flag: "event-retention", default: 10_000, parse: integer(1) },
  interactionTimeoutMs: { flag: "interaction-timeout-ms", default: 300_000, parse: integer(1) },
} satisfies Record<string, SettingSpec<unknown>>;

/** The Unix socket serving the Ask surface to local clients (absent: none). */
export const socketSettings = {
  socket: { flag: "socket", parse: socketPath },
  socketMode: { flag: "socket-mode", default: 0o600, parse: fileMode },
} satisfies Record<string, SettingSpec<unknown>>;

export const logSettings = {
  logLevel: {
    flag: "log-level",
    default: "info" as "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent",
    parse: oneOf("fatal", "error", "warn", "info", "debug", "trace", "silent"),
  },
} satisfies Record<string, SettingSpec<unknown>>;
