import { parentPort } from "node:worker_threads";
import { systemErrorText } from "../shared/unknown-values.js";
import { checkTranscript, FileReadError, openTranscript, type FileSettings } from "./validate-file.js";
import { transferables, VerdictEncoder, type VerdictBatch } from "./verdict-batches.js";

/**
 * A worker thread of `tau-gateway validate --jobs N` (validate-jobs.ts): checks the files it is
 * given, one at a time, and posts their verdicts back a batch at a time, in the file's order, in
 * the compact form of verdict-batches.ts.
 */

export interface FileJob {
  index: number;
  path: string;
  settings: FileSettings;
}

export type WorkerReply =
  | { index: number; batch: VerdictBatch }
  | { index: number; done: true }
  | { index: number; failed: "open" | "read"; message: string };

if (parentPort) {
  const port = parentPort;
  port.on("message", (job: FileJob) => {
    void checkFile(job).then(
      () => port.postMessage({ index: job.index, done: true } satisfies WorkerReply),
      (err: unknown) => {
        const failure = err instanceof FileReadError ? err : new FileReadError("read", err);
        port.postMessage({ index: job.index, failed: failure.stage, message: systemErrorText(failure.cause) } satisfies WorkerReply);
      },
    );
  });
}

async function checkFile(job: FileJob): Promise<void> {
  const input = await openTranscript(job.path);
  const encoder = new VerdictEncoder();
  const post = (batch: VerdictBatch) => parentPort!.postMessage({ index: job.index, batch } satisfies WorkerReply, transferables(batch));
  await checkTranscript(input, job.settings, (lines) => encoder.add(lines, post));
  const last = encoder.flush();
  if (last) post(last);
}
