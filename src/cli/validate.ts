import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { parseArgs } from "node:util";
import type { Dialect } from "../registry/index.js";
import { TranscriptReader } from "../validation/recording-lines.js";
import type { JsonBounds } from "../shared/json-bounds.js";

/**
 * validate runs on the user's own files, holding no one else's event loop: a line of any number
 * of values is checked (a Tau snapshot can hold many), and only nesting deep enough to overflow
 * the stack of the schema check is refused, as a verdict on that line.
 */
const OFFLINE_JSON_BOUNDS: JsonBounds = { maxDepth: 1_000, maxValues: Number.POSITIVE_INFINITY };
import { ProtocolValidators } from "../validation/validator.js";
import { readerWentAway, UsageError, type CommandIO } from "./io.js";
import { lineBatches } from "./line-batches.js";
import { isReportFormat, REPORT_FORMATS, type ReportFormat } from "./validate-reports/index.js";
import { errorText, systemErrorText } from "../shared/unknown-values.js";

/** The usage text, naming the dialects the schema has. */
const validateUsage = (dialects: readonly Dialect[]) => `usage: tau-gateway validate [--dialect ${dialects.join("|")}] [--tau-version 18|13] [--format text|json|github|junit|sarif] FILE... | -

Checks JSONL transcripts against the tau-gateway schema. Without --dialect each line's dialect
is detected: Tau messages carry version and type; JSON-RPC lines are Ask unless their method (or
the request they answer) is only Codex's; give --dialect codex for Codex app-server transcripts
and --dialect acp for ACP ones (ACP shares method names with Ask). A line is a bare message or
{"direction":"client"|"server","message":{...}} (client = sent by the client; other members,
such as a time, are ignored). Responses are checked against the result of the request with the
same id earlier in the same file. A recording (serve --record, --record FILE) starts with a
header line {"recording":{"dialect":...}} that sets the file's dialect (over --dialect, which is
for files without one); a recorded line holding
text that was not JSON ({"direction":...,"text":...}) is reported as such.

Output (--format):
  text    one line per error, FILE:LINE: <dialect> <method or type>: <pointer>: <message>, then
          "N valid, M invalid" (the default)
  json    one JSON object per error, then {"valid":N,"invalid":M}
  github  one GitHub Actions annotation per invalid line (::error file=F,line=N,title=T::...),
          shown on that line of the pull request, then "N valid, M invalid"
  junit   JUnit XML: a test suite per file, a test case per message, a failure per invalid one
          (with its pointers and messages); the totals go to stderr
  sarif   SARIF 2.1.0: a result per error, located at its line; the totals go to stderr
junit and sarif print one document once every file was read.
Exit status: 0 all valid, 1 some line invalid, 2 usage or I/O error; 0 without a summary
when the reader of the output closes early (… | head).`;


interface Options {
  dialect?: Dialect;
  tauVersion?: number;
  format: ReportFormat;
  files: string[];
}

function parse(argv: string[]): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      dialect: { type: "string" },
      "tau-version": { type: "string" },
      format: { type: "string", default: "text" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) throw new UsageError("", 0);
  const dialect = values.dialect;
  const dialects = ProtocolValidators.shared().dialects;
  if (dialect !== undefined && !dialects.includes(dialect as Dialect)) throw new UsageError(`--dialect must be ${dialects.slice(0, -1).join(", ")} or ${dialects.at(-1)} (got ${JSON.stringify(dialect)})`);
  const version = values["tau-version"];
  if (version !== undefined && version !== "18" && version !== "13") throw new UsageError(`--tau-version must be 18 or 13 (got ${JSON.stringify(version)})`);
  const format = values.format;
  if (!isReportFormat(format)) throw new UsageError(`--format must be ${Object.keys(REPORT_FORMATS).join(", ")} (got ${JSON.stringify(format)})`);
  if (!positionals.length) throw new UsageError("no input: give one or more files, or - for stdin");
  return { dialect: dialect as Dialect | undefined, tauVersion: version === undefined ? undefined : Number(version), format, files: positionals };
}

export async function runValidate(argv: string[], io: CommandIO): Promise<number> {
  let options: Options;
  try {
    options = parse(argv);
  } catch (err) {
    const code = err instanceof UsageError ? err.exitCode : 2;
    const message = errorText(err);
    if (code === 0) {
      io.stdout(`${validateUsage(ProtocolValidators.shared().dialects)}\n`);
      return 0;
    }
    io.stderr(`tau-gateway validate: ${message}\n${validateUsage(ProtocolValidators.shared().dialects)}\n`);
    return code;
  }
  const output = io.watchStdout?.();
  const report = REPORT_FORMATS[options.format](io);
  let valid = 0;
  let invalid = 0;
  for (const file of options.files) {
    if (output?.aborted) break;
    // Ids are correlated within one transcript; each file is its own conversation.
    const reader = new TranscriptReader({ dialect: options.dialect, tauVersion: options.tauVersion, jsonBounds: OFFLINE_JSON_BOUNDS });
    report.file(file === "-" ? "<stdin>" : file);
    let input: Readable;
    try {
      input = file === "-" ? io.stdin : await openFile(file);
    } catch (err) {
      io.stderr(`tau-gateway validate: cannot read ${file}: ${systemErrorText(err)}\n`);
      return 2;
    }
    let lineNo = 0;
    /** Checks one line and reports what is wrong with it (a blank line or a recording's header is no message). */
    const checkLine = (text: string) => {
      lineNo++;
      const read = reader.read(text);
      if (read.type !== "message") return;
      if (read.verdict.ok) valid++;
      else invalid++;
      report.line(lineNo, read.verdict);
    };
    try {
      reading: for await (const lines of lineBatches(input)) {
        for (const text of lines) {
          if (output?.aborted) {
            // Nobody reads the report any more: stop reading too.
            input.destroy();
            break reading;
          }
          checkLine(text);
        }
      }
    } catch (err) {
      io.stderr(`tau-gateway validate: error reading ${file}: ${systemErrorText(err)}\n`);
      return 2;
    }
  }
  if (output?.aborted) {
    // The reader closed early (`validate … | head`): what it read is all it wanted.
    if (readerWentAway(output.reason)) return 0;
    io.stderr(`tau-gateway validate: cannot write the report: ${(output.reason as NodeJS.ErrnoException).code ?? String(output.reason)}\n`);
    return 2;
  }
  report.end({ valid, invalid });
  return invalid ? 1 : 0;
}

/** Opens a file, surfacing "not found" and friends before any output is written. */
function openFile(path: string): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const stream = createReadStream(path);
    stream.once("open", () => resolve(stream));
    stream.once("error", reject);
  });
}
