import { formatIssue } from "../../validation/issues.js";
import type { LineVerdict } from "../../validation/transcript.js";
import { lineSubject, totalsLine, type ReportOutput, type TranscriptReport } from "./report.js";

/**
 * `--format junit`: JUnit XML, as Jenkins, GitLab, Buildkite, CircleCI and the GitHub test-report
 * actions read it. A test suite per transcript, a test case per message (named by its line, dialect
 * and method), and for an invalid message one failure whose message is its first issue and whose
 * text lists every issue with its pointer. The document is printed at the end (a suite's counts
 * come before its cases), so a transcript's cases are held until it has been read; the totals go
 * to stderr, keeping stdout one XML document.
 */
export class JunitReport implements TranscriptReport {
  private readonly suites: string[] = [];
  private suite: { name: string; cases: string[]; failures: number } | undefined;
  private tests = 0;
  private failures = 0;

  constructor(private readonly out: ReportOutput) {}

  file(name: string): void {
    this.closeSuite();
    this.suite = { name, cases: [], failures: 0 };
  }

  line(lineNo: number, verdict: LineVerdict): void {
    const suite = this.suite!;
    const attributes = `classname="${xml(suite.name)}" name="${xml(`line ${lineNo}: ${lineSubject(verdict)}`)}" file="${xml(suite.name)}" line="${lineNo}"`;
    this.tests++;
    if (verdict.ok) {
      suite.cases.push(`    <testcase ${attributes}/>`);
      return;
    }
    suite.failures++;
    this.failures++;
    const first = verdict.issues[0];
    const failure = `<failure message="${xml(first ? formatIssue(first) : "invalid")}" type="${xml(first?.keyword ?? "invalid")}">${xml(verdict.issues.map(formatIssue).join("\n"))}</failure>`;
    suite.cases.push(`    <testcase ${attributes}>\n      ${failure}\n    </testcase>`);
  }

  end(totals: { valid: number; invalid: number }): void {
    this.closeSuite();
    this.out.stdout(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        `<testsuites name="tau-gateway validate" tests="${this.tests}" failures="${this.failures}" errors="0">`,
        ...this.suites,
        "</testsuites>",
        "",
      ].join("\n"),
    );
    this.out.stderr(totalsLine(totals));
  }

  private closeSuite(): void {
    const suite = this.suite;
    if (!suite) return;
    const counts = `tests="${suite.cases.length}" failures="${suite.failures}" errors="0" skipped="0"`;
    this.suites.push(
      suite.cases.length
        ? `  <testsuite name="${xml(suite.name)}" ${counts}>\n${suite.cases.join("\n")}\n  </testsuite>`
        : `  <testsuite name="${xml(suite.name)}" ${counts}/>`,
    );
    this.suite = undefined;
  }
}

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;" };

/**
 * Text as XML attribute or element content. Characters XML 1.0 cannot carry at all (control
 * characters, lone surrogates; a transcript line that is not JSON may hold any) are written as
 * `\uXXXX`, so the document stays well-formed and still shows what was there. Line breaks and tabs
 * are character references, which survive attribute-value normalisation.
 */
export function xml(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .replace(/[&<>"'\n\r\t]/g, (c) => ENTITIES[c]!);
}
