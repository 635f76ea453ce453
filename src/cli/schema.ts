import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BundleFormatError, readSurface } from "./schema-diff/bundle-readers.js";
import { compareSurfaces } from "./schema-diff/compare.js";
import { buildReport, textLines, totalsLine } from "./schema-diff/report.js";
import type { View } from "./schema-diff/view.js";
import type { Surface } from "./schema-diff/surface.js";
import { UsageError, type CommandIO } from "./io.js";
import { systemErrorText } from "../shared/unknown-values.js";

export const SCHEMA_USAGE = `usage: tau-gateway schema diff [--format text|json] [--as client|server] [--methods FILE|LIST] OLD NEW

Compares two schema bundles of one protocol and says what in NEW changes for a client (or a
server) written against OLD. A bundle is tau-gateway's own (schema/*.schema.json), the official
Codex app-server one (codex app-server generate-json-schema; give the file or the folder holding
codex_app_server_protocol.schemas.json) or the official ACP schema.json.

--as client (default): breaking (exit status 1) is a removed method or notification; in what the
client sends (params of its requests and notifications, its answers to server requests) a new
required field, a removed field, a narrowed enum or a type no longer accepted; in what it receives
(results, server notifications, server requests) a removed field, one no longer always present, or
a new type (retyped). Additive (exit status 0): new methods, fields, enum values and variants.

--as server: what a server written against OLD must now honour (exit status 1): requests and
notifications it is newly sent, new fields (optional ones too) and new enum values and variants in
what it is sent; what it may emit (exit status 0): new fields, values and variants clients now
accept in results, notifications and server requests, new server notifications and requests;
obsolete (exit status 0): requests and notifications it is no longer sent. Breaking (exit status
1): what it sends that clients no longer accept, and what it reads that is gone.

--methods FILE|LIST: only what these methods reach (requests, notifications, server requests by
their wire names): a comma-separated list, or a file with one method per line (blank lines and
lines starting with # skipped). An existing file is read as a file; anything else is a list.

A change inside a definition several methods share is said once, for the definition, with the
methods it reaches on the next line. Output: one line per change, <severity> <kind> <method>
<pointer>: <what> (or <severity> <Definition> <pointer>: <what>), the pointer into the message or
the definition (* for any key or index), then the totals. --format json: one object per change,
then the totals. A request whose result neither bundle's names lead to is a warning on stderr,
never skipped silently. Exit status 2: usage error, or a file that cannot be read or is not a
bundle.`;

interface DiffOptions {
  format: "text" | "json";
  view: View;
  /** The --methods value, read later (it may be a file). */
  methods?: string;
  files: [string, string];
}

export async function runSchema(argv: string[], io: CommandIO): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    io.stdout(`${SCHEMA_USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== "diff") {
    io.stderr(`tau-gateway schema: unknown subcommand ${JSON.stringify(sub)}\n${SCHEMA_USAGE}\n`);
    return 2;
  }
  let options: DiffOptions;
  try {
    options = parse(rest);
  } catch (err) {
    if (err instanceof UsageError && err.exitCode === 0) {
      io.stdout(`${SCHEMA_USAGE}\n`);
      return 0;
    }
    io.stderr(`tau-gateway schema diff: ${(err as Error).message}\n${SCHEMA_USAGE}\n`);
    return 2;
  }
  let before: Surface;
  let after: Surface;
  let methods: Set<string> | undefined;
  try {
    [before, after] = await Promise.all(options.files.map(loadSurface));
    methods = options.methods === undefined ? undefined : await readMethodList(options.methods);
  } catch (err) {
    io.stderr(`tau-gateway schema diff: ${(err as Error).message}\n`);
    return 2;
  }
  const report = buildReport(compareSurfaces(before!, after!, options.view), methods);
  for (const warning of report.warnings) io.stderr(`tau-gateway schema diff: warning: ${warning}\n`);
  for (const change of report.changes) io.stdout(`${options.format === "json" ? JSON.stringify(change) : textLines(change)}\n`);
  io.stdout(options.format === "json" ? `${JSON.stringify({ ...report.totals, warnings: report.warnings.length })}\n` : `${totalsLine(report)}\n`);
  return report.failed ? 1 : 0;
}

function parse(argv: string[]): DiffOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      format: { type: "string", default: "text" },
      as: { type: "string", default: "client" },
      methods: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) throw new UsageError("", 0);
  if (values.format !== "text" && values.format !== "json") throw new UsageError(`--format must be text or json (got ${JSON.stringify(values.format)})`);
  if (values.as !== "client" && values.as !== "server") throw new UsageError(`--as must be client or server (got ${JSON.stringify(values.as)})`);
  if (values.methods !== undefined && !values.methods.trim()) throw new UsageError("--methods needs a file or a comma-separated list of methods");
  if (positionals.length !== 2) throw new UsageError(`give two bundles, OLD and NEW (got ${positionals.length})`);
  return { format: values.format, view: values.as, methods: values.methods, files: [positionals[0]!, positionals[1]!] };
}

/**
 * The --methods value: an existing file holds one method per line (# starts a comment line);
 * anything else is a comma-separated list. A value written as a path (./, ../, /, ~/) that is no
 * readable file is an error rather than a list of one strange method.
 */
async function readMethodList(value: string): Promise<Set<string>> {
  let text: string | undefined;
  try {
    if ((await stat(value)).isFile()) text = await readFile(value, "utf8");
  } catch (err) {
    if (/^(\.{1,2}\/|\/|~\/)/.test(value)) throw new Error(`cannot read the --methods file ${value}: ${systemErrorText(err)}`);
  }
  const names = text === undefined ? value.split(",") : text.split(/\r?\n/).filter((line) => !line.trim().startsWith("#"));
  const methods = new Set(names.map((n) => n.trim()).filter(Boolean));
  if (!methods.size) throw new Error(text === undefined ? "--methods names no method" : `the --methods file ${value} names no method`);
  return methods;
}

/** The official Codex generator writes its bundle into a folder under this name. */
const CODEX_BUNDLE = "codex_app_server_protocol.schemas.json";

async function loadSurface(path: string): Promise<Surface> {
  let file = path;
  try {
    if ((await stat(path)).isDirectory()) file = join(path, CODEX_BUNDLE);
  } catch (err) {
    throw new Error(`cannot read ${path}: ${systemErrorText(err)}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code ? `cannot read ${file}: ${code}` : `${file} is not JSON: ${(err as Error).message}`);
  }
  try {
    return readSurface(document);
  } catch (err) {
    if (err instanceof BundleFormatError) throw new Error(`${file}: ${err.message}`);
    throw err;
  }
}
