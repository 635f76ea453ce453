import { formatIssue } from "../../validation/issues.js";
import type { LineVerdict } from "../../validation/transcript.js";
import { InvalidLineReport, lineSubject, totalsLine } from "./report.js";

/**
 * `--format text` and `--format json`: one output line per issue as soon as it is found, then the
 * totals (`N valid, M invalid`, or `{"valid":N,"invalid":M}`).
 */
abstract class IssueLines extends InvalidLineReport {
  protected invalidLine(file: string, lineNo: number, verdict: LineVerdict): void {
    for (const issue of verdict.issues) this.out.stdout(`${this.issueLine(file, lineNo, verdict, issue)}\n`);
  }

  protected abstract issueLine(file: string, lineNo: number, verdict: LineVerdict, issue: LineVerdict["issues"][number]): string;
}

export class TextReport extends IssueLines {
  protected issueLine(file: string, lineNo: number, verdict: LineVerdict, issue: LineVerdict["issues"][number]): string {
    return `${file}:${lineNo}: ${lineSubject(verdict)}: ${formatIssue(issue)}`;
  }

  end(totals: { valid: number; invalid: number }): void {
    this.out.stdout(totalsLine(totals));
  }
}

export class JsonLinesReport extends IssueLines {
  protected issueLine(file: string, lineNo: number, verdict: LineVerdict, issue: LineVerdict["issues"][number]): string {
    return JSON.stringify({ file, line: lineNo, dialect: verdict.dialect ?? null, subject: verdict.subject ?? null, pointer: issue.pointer, message: issue.message });
  }

  end(totals: { valid: number; invalid: number }): void {
    this.out.stdout(`${JSON.stringify(totals)}\n`);
  }
}
