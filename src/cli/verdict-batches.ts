import type { LineVerdict } from "../validation/transcript.js";
import type { CheckedLine } from "./validate-file.js";

/**
 * The verdicts of a chunk of lines as a worker of `validate --jobs N` posts them to the command's
 * thread: line numbers and verdict references in two typed arrays (moved, not copied), each valid
 * verdict a reference into the file's table of the valid kinds seen so far (a dialect and a subject,
 * few per file), only invalid verdicts as objects. Posting a verdict object per line cost more
 * than checking the line: the structured clone in the worker, rebuilding and collecting it in the
 * command's thread, which then did that work for every line of every file alone.
 */

export interface VerdictBatch {
  lineNos: Uint32Array;
  /** ≥ 0: the valid kind with that number; < 0: `invalid[-ref - 1]`. */
  refs: Int32Array;
  /** Valid kinds first seen in this batch, numbered on from the file's earlier batches. */
  newKinds: Array<readonly [dialect: LineVerdict["dialect"], subject: string | undefined]>;
  invalid: LineVerdict[];
}

/** A valid verdict with no issues: all it says is its dialect and subject. */
const isPlainValid = (verdict: LineVerdict) => verdict.ok && verdict.issues.length === 0;

/**
 * Lines a batch holds at most. A worker posts a batch when it is full (and the last at the end of
 * its file), not one per chunk read: a message costs about a tenth of a millisecond in each thread,
 * and a 64 KiB chunk is only 300 or so lines.
 */
export const BATCH_LINES = 16_384;

/** One file's encoder, in the worker: remembers the valid kinds it has numbered, fills a batch at a time. */
export class VerdictEncoder {
  /** The number of each valid kind, by dialect, then subject (no key string made per line). */
  private readonly kinds = new Map<LineVerdict["dialect"], Map<string | undefined, number>>();
  private kindCount = 0;
  private batch = newBatch();
  private filled = 0;

  /** Adds lines; `post` gets each batch they fill. */
  add(lines: readonly CheckedLine[], post: (batch: VerdictBatch) => void): void {
    for (const [lineNo, verdict] of lines) {
      const { batch } = this;
      const at = this.filled++;
      batch.lineNos[at] = lineNo;
      if (isPlainValid(verdict)) batch.refs[at] = this.kind(verdict, batch);
      else batch.refs[at] = -batch.invalid.push(verdict);
      if (this.filled === BATCH_LINES) post(this.take());
    }
  }

  /** The batch begun and not yet full, if it holds any line. */
  flush(): VerdictBatch | undefined {
    return this.filled > 0 ? this.take() : undefined;
  }

  private kind(verdict: LineVerdict, batch: VerdictBatch): number {
    let bySubject = this.kinds.get(verdict.dialect);
    if (!bySubject) this.kinds.set(verdict.dialect, (bySubject = new Map()));
    let kind = bySubject.get(verdict.subject);
    if (kind === undefined) {
      kind = this.kindCount++;
      bySubject.set(verdict.subject, kind);
      batch.newKinds.push([verdict.dialect, verdict.subject]);
    }
    return kind;
  }

  private take(): VerdictBatch {
    const { batch, filled } = this;
    this.batch = newBatch();
    this.filled = 0;
    return filled === BATCH_LINES ? batch : { ...batch, lineNos: batch.lineNos.slice(0, filled), refs: batch.refs.slice(0, filled) };
  }
}

const newBatch = (): VerdictBatch => ({ lineNos: new Uint32Array(BATCH_LINES), refs: new Int32Array(BATCH_LINES), newKinds: [], invalid: [] });

/** The buffers a batch's message may move instead of copying. */
export const transferables = (batch: VerdictBatch): ArrayBuffer[] => [batch.lineNos.buffer as ArrayBuffer, batch.refs.buffer as ArrayBuffer];

/** One file's decoder, in the command's thread: the verdicts as the worker found them. */
export class VerdictDecoder {
  /** One verdict object per valid kind, shared by its lines (reports only read verdicts). */
  private readonly kinds: LineVerdict[] = [];

  decode(batch: VerdictBatch): CheckedLine[] {
    for (const [dialect, subject] of batch.newKinds) this.kinds.push({ ok: true, subject, issues: [], dialect });
    const lines: CheckedLine[] = new Array(batch.lineNos.length);
    for (let i = 0; i < lines.length; i++) {
      const ref = batch.refs[i]!;
      lines[i] = [batch.lineNos[i]!, ref >= 0 ? this.kinds[ref]! : batch.invalid[-ref - 1]!];
    }
    return lines;
  }
}
