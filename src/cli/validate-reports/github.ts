import { formatIssue } from "../../validation/issues.js";
import type { LineVerdict } from "../../validation/transcript.js";
import { InvalidLineReport, lineSubject, totalsLine } from "./report.js";

/**
 * `--format github`: one GitHub Actions workflow command per invalid line,
 * `::error file=F,line=N,title=T::issues`, which the runner turns into an annotation on that line of
 * the pull request; every issue of the line is in its message, one per line. Then the plain totals.
 */
export class GithubReport extends InvalidLineReport {
  protected invalidLine(file: string, lineNo: number, verdict: LineVerdict): void {
    const properties = `file=${escapeProperty(file)},line=${lineNo},title=${escapeProperty(`invalid ${lineSubject(verdict)}`)}`;
    this.out.stdout(`::error ${properties}::${escapeData(verdict.issues.map(formatIssue).join("\n"))}\n`);
  }

  end(totals: { valid: number; invalid: number }): void {
    this.out.stdout(totalsLine(totals));
  }
}

/** A command's message, escaped as the runner unescapes it (actions/toolkit's escapeData). */
export const escapeData = (text: string) => text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");

/** A command property's value: also `:` and `,`, which would end it (actions/toolkit's escapeProperty). */
export const escapeProperty = (text: string) => escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
