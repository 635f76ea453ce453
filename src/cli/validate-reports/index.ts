import { GithubReport } from "./github.js";
import { JunitReport } from "./junit.js";
import { JsonLinesReport, TextReport } from "./line-formats.js";
import type { ReportOutput, TranscriptReport } from "./report.js";
import { SarifReport } from "./sarif.js";

export type { TranscriptReport } from "./report.js";

/** `validate --format` values and the report each makes. */
export const REPORT_FORMATS = {
  text: (out: ReportOutput) => new TextReport(out),
  json: (out: ReportOutput) => new JsonLinesReport(out),
  github: (out: ReportOutput) => new GithubReport(out),
  junit: (out: ReportOutput) => new JunitReport(out),
  sarif: (out: ReportOutput) => new SarifReport(out),
} satisfies Record<string, (out: ReportOutput) => TranscriptReport>;

export type ReportFormat = keyof typeof REPORT_FORMATS;

export const isReportFormat = (name: string): name is ReportFormat => Object.hasOwn(REPORT_FORMATS, name);
