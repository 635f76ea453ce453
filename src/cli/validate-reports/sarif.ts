import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { gatewayVersion } from "../../gateway/version.js";
import type { ValidationIssue } from "../../validation/issues.js";
import type { LineVerdict } from "../../validation/transcript.js";
import { InvalidLineReport, lineSubject, totalsLine } from "./report.js";

/**
 * `--format sarif`: a SARIF 2.1.0 log (GitHub code scanning, GitLab, Azure DevOps read it): one run
 * of the tool, a result per issue located at its transcript line, with the JSON pointer and the
 * dialect and method as properties. Printed once everything was read; totals on stderr.
 */
export class SarifReport extends InvalidLineReport {
  private readonly results: object[] = [];

  protected invalidLine(file: string, lineNo: number, verdict: LineVerdict): void {
    for (const issue of verdict.issues) {
      this.results.push({
        ruleId: ruleOf(issue).id,
        level: "error",
        message: { text: `${lineSubject(verdict)}: ${issue.pointer || "/"}: ${issue.message}` },
        locations: [{ physicalLocation: { artifactLocation: { uri: fileUri(file) }, region: { startLine: lineNo } } }],
        properties: { pointer: issue.pointer, dialect: verdict.dialect ?? null, subject: verdict.subject ?? null },
      });
    }
  }

  end(totals: { valid: number; invalid: number }): void {
    const log = {
      $schema: "https://json.schemastore.org/sarif-2.1.0.json",
      version: "2.1.0",
      runs: [
        {
          tool: { driver: { name: "tau-gateway validate", version: gatewayVersion(), rules: RULES.map(({ id, text }) => ({ id, shortDescription: { text } })) } },
          results: this.results,
        },
      ],
    };
    this.out.stdout(`${JSON.stringify(log, null, 2)}\n`);
    this.out.stderr(totalsLine(totals));
  }
}

const RULES = [
  { id: "not-json", text: "A transcript line that is not JSON" },
  { id: "correlation", text: "A response that answers no open request, or a request id still open" },
  { id: "schema", text: "A message that does not fit the dialect's schema" },
] as const;

function ruleOf(issue: ValidationIssue): (typeof RULES)[number] {
  if (issue.keyword === "json") return RULES[0];
  if (issue.keyword === "correlation") return RULES[1];
  return RULES[2];
}

/** A transcript's location as SARIF wants it: a file URL for an absolute path, else a relative URI reference. */
function fileUri(name: string): string {
  if (isAbsolute(name)) return pathToFileURL(name).href;
  return name.split(/[\\/]/).map(encodeURIComponent).join("/");
}
