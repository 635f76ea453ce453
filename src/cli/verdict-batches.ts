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

/** One file's encoder, in the worker: remembers the valid kinds it has numbered. */
export class VerdictEncoder {
  private readonly kinds = new Map<string, number>();

  encode(lines: readonly CheckedLine[]): VerdictBatch {
    const lineNos = new Uint32Array(lines.length);
    const refs = new Int32Array(lines.length);
    const newKinds: VerdictBatch["newKinds"] = [];
    const invalid: LineVerdict[] = [];
    for (let i = 0; i < lines.length; i++) {
      const [lineNo, verdict] = lines[i]!;
      lineNos[i] = lineNo;
      if (!isPlainValid(verdict)) {
        invalid.push(verdict);
        refs[i] = -invalid.length;
        continue;
      }
      const key = `${verdict.dialect ?? ""}\u0000${verdict.subject ?? "\u0000"}`;
      let kind = this.kinds.get(key);
      if (kind === undefined) {
        kind = this.kinds.size;
        this.kinds.set(key, kind);
        newKinds.push([verdict.dialect, verdict.subject]);
      }
      refs[i] = kind;
    }
    return { lineNos, refs, newKinds, invalid };
  }
}

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
