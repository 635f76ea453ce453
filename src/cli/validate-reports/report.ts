import type { LineVerdict } from "../../validation/transcript.js";

/**
 * Where `validate` puts what it finds, one implementation per `--format`. The command feeds every
 * checked line in order, file by file; the format decides what to print and when (the line formats
 * as they go, the document formats — JUnit, SARIF — once everything was read).
 */
export interface TranscriptReport {
  /** A new transcript starts (its display name: the path as given, `<stdin>` for -). */
  file(name: string): void;
  /** A non-blank line of the current transcript was checked. */
  line(lineNo: number, verdict: LineVerdict): void;
  /** Every transcript was read: print whatever is left, with the totals. */
  end(totals: { valid: number; invalid: number }): void;
}

/** A report that prints only invalid lines, each with the transcript it is in. */
export abstract class InvalidLineReport implements TranscriptReport {
  private current = "";

  constructor(protected readonly out: ReportOutput) {}

  file(name: string): void {
    this.current = name;
  }

  line(lineNo: number, verdict: LineVerdict): void {
    if (!verdict.ok) this.invalidLine(this.current, lineNo, verdict);
  }

  abstract end(totals: { valid: number; invalid: number }): void;
  protected abstract invalidLine(file: string, lineNo: number, verdict: LineVerdict): void;
}

/** What a report prints to: the report itself, and notes that must not mix into a document. */
export interface ReportOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The totals line every format ends with (on stderr for the document formats). */
export const totalsLine = (totals: { valid: number; invalid: number }) => `${totals.valid} valid, ${totals.invalid} invalid\n`;

/** The test or rule name of a checked line: `ask session/send`, or the dialect alone when the line said no more. */
export const lineSubject = (verdict: LineVerdict) => `${verdict.dialect ?? "?"}${verdict.subject ? ` ${verdict.subject}` : ""}`;
