import type { Readable } from "node:stream";
import { parseArgs } from "node:util";
import type { Dialect } from "../registry/index.js";
import { ProtocolValidators } from "../validation/validator.js";
import { readerWentAway, UsageError, type CommandIO } from "./io.js";
import { checkTranscript, FileReadError, openTranscript, type CheckedLine } from "./validate-file.js";
import { checkFilesInWorkers } from "./validate-jobs.js";
import { isReportFormat, REPORT_FORMATS, type ReportFormat } from "./validate-reports/index.js";
import { errorText, systemErrorText } from "../shared/unknown-values.js";

/** The usage text, naming the dialects the schema has. */
const validateUsage = (dialects: readonly Dialect[]) => `usage: tau-gateway validate [--dialect ${dialects.join("|")}] [--tau-version 18|13] [--format text|json|github|junit|sarif] [--jobs N] FILE... | -

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
--jobs N checks up to N files at once, each in a thread of its own (the command's and N - 1
workers; each file whole: ids are correlated within a file); the report is the same, in the same
order, as without it.
Exit status: 0 all valid, 1 some line invalid, 2 usage or I/O error; 0 without a summary
when the reader of the output closes early (… | head).`;


interface Options {
  dialect?: Dialect;
  tauVersion?: number;
  format: ReportFormat;
  jobs: number;
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
      jobs: { type: "string", default: "1" },
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
  const jobs = values.jobs;
  if (!/^[1-9][0-9]{0,2}$/.test(jobs)) throw new UsageError(`--jobs must be a whole number from 1 to 999 (got ${JSON.stringify(jobs)})`);
  if (!positionals.length) throw new UsageError("no input: give one or more files, or - for stdin");
  return { dialect: dialect as Dialect | undefined, tauVersion: version === undefined ? undefined : Number(version), format, jobs: Number(jobs), files: positionals };
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
  const reportLines = (lines: CheckedLine[]) => {
    for (const [lineNo, verdict] of lines) {
      if (output?.aborted) return;
      if (verdict.ok) valid++;
      else invalid++;
      report.line(lineNo, verdict);
    }
  };
  const failed = (file: string, stage: "open" | "read", message: string) => {
    io.stderr(stage === "open" ? `tau-gateway validate: cannot read ${file}: ${message}\n` : `tau-gateway validate: error reading ${file}: ${message}\n`);
    return 2;
  };
  const settings = { dialect: options.dialect, tauVersion: options.tauVersion };
  if (options.jobs > 1 && options.files.length > 1 && !options.files.includes("-")) {
    for await (const event of checkFilesInWorkers(options.files, settings, options.jobs)) {
      if (output?.aborted) break;
      if (event.type === "file") report.file(options.files[event.index]!);
      else if (event.type === "lines") reportLines(event.lines);
      else return failed(options.files[event.index]!, event.stage, event.message);
    }
  } else {
    for (const file of options.files) {
      if (output?.aborted) break;
      report.file(file === "-" ? "<stdin>" : file);
      try {
        const input: Readable = file === "-" ? io.stdin : await openTranscript(file);
        // Nobody reads the report any more: stop reading too.
        await checkTranscript(input, settings, reportLines, () => output?.aborted === true);
      } catch (err) {
        const failure = err instanceof FileReadError ? err : new FileReadError("read", err);
        return failed(file, failure.stage, systemErrorText(failure.cause));
      }
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
