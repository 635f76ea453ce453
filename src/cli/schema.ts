import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BundleFormatError, readSurface } from "./schema-diff/bundle-readers.js";
import { compareSurfaces, type SchemaChange } from "./schema-diff/compare.js";
import type { Surface } from "./schema-diff/surface.js";
import { UsageError, type CommandIO } from "./io.js";
import { systemErrorText } from "../shared/unknown-values.js";

export const SCHEMA_USAGE = `usage: tau-gateway schema diff [--format text|json] OLD NEW

Compares two schema bundles of one protocol as a client sees them, and says what in NEW breaks a
client written against OLD. A bundle is tau-gateway's own (schema/*.schema.json), the official
Codex app-server one (codex app-server generate-json-schema; give the file or the folder holding
codex_app_server_protocol.schemas.json) or the official ACP schema.json.

Breaking (exit status 1): a removed method or notification; in what the client sends (params of
its requests and notifications, its answers to server requests) a new required field, a removed
field, a narrowed enum or a type no longer accepted; in what it receives (results, server
notifications, server requests) a removed field, one no longer always present, or a new type
(retyped). Additive (exit status 0): new methods, fields, enum values and variants.

Output: one line per change, <breaking|additive> <kind> <method> <pointer>: <what>, the pointer
into the message (* for any key or index), then "N breaking, M additive". --format json: one
object per change, then {"breaking":N,"additive":M}. Exit status 2: usage error, or a file that
cannot be read or is not a bundle.`;

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
  let options: { format: "text" | "json"; files: [string, string] };
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
  try {
    [before, after] = await Promise.all(options.files.map(loadSurface));
  } catch (err) {
    io.stderr(`tau-gateway schema diff: ${(err as Error).message}\n`);
    return 2;
  }
  const changes = compareSurfaces(before!, after!);
  const breaking = changes.filter((c) => c.severity === "breaking").length;
  const additive = changes.length - breaking;
  for (const change of changes) io.stdout(`${options.format === "json" ? JSON.stringify(change) : textLine(change)}\n`);
  io.stdout(options.format === "json" ? `${JSON.stringify({ breaking, additive })}\n` : `${breaking} breaking, ${additive} additive\n`);
  return breaking ? 1 : 0;
}

function parse(argv: string[]): { format: "text" | "json"; files: [string, string] } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { format: { type: "string", default: "text" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) throw new UsageError("", 0);
  if (values.format !== "text" && values.format !== "json") throw new UsageError(`--format must be text or json (got ${JSON.stringify(values.format)})`);
  if (positionals.length !== 2) throw new UsageError(`give two bundles, OLD and NEW (got ${positionals.length})`);
  return { format: values.format, files: [positionals[0]!, positionals[1]!] };
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

function textLine(change: SchemaChange): string {
  return `${change.severity} ${change.kind} ${change.method} ${change.pointer || "/"}: ${change.message}`;
}
