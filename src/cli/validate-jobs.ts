import type { Worker } from "node:worker_threads";
import { moduleWorker } from "../shared/module-worker.js";
import { systemErrorText } from "../shared/unknown-values.js";
import { checkTranscript, FileReadError, openTranscript, type CheckedLine, type FileSettings } from "./validate-file.js";
import type { FileJob, WorkerReply } from "./validate-worker.js";
import { VerdictDecoder, type VerdictBatch } from "./verdict-batches.js";

/**
 * `tau-gateway validate --jobs N`: up to N files checked at once, each file whole by one checker
 * (ids are correlated within a file), and what was found handed on in the files' order, as one
 * thread would have found it: a file's verdicts wait until every file before it is done. The
 * command's own thread is one of the N checkers, beside N - 1 worker threads: a worker costs a
 * tenth of a second of CPU before it checks a line (Node's own modules compiled again for its
 * isolate, the validators loaded again), and the command's thread, which only waited for the
 * workers, was already started. It takes the first file, whose report then goes out as it is
 * checked, and, like each worker, the next file not yet taken whenever it is done with one.
 */

export type CheckedEvent =
  | { type: "file"; index: number }
  | { type: "lines"; lines: CheckedLine[] }
  | { type: "failed"; index: number; stage: "open" | "read"; message: string };

interface FileState {
  /**
   * Found and not yet handed on: a worker's batches in their compact form (decoded only then, so
   * a waiting file holds little), or the command's thread's own lines.
   */
  batches: Array<VerdictBatch | CheckedLine[]>;
  decoder: VerdictDecoder;
  end?: { done: true } | { failed: "open" | "read"; message: string };
}

export async function* checkFilesInWorkers(paths: readonly string[], settings: FileSettings, jobs: number): AsyncGenerator<CheckedEvent> {
  const states = paths.map((): FileState => ({ batches: [], decoder: new VerdictDecoder() }));
  let nextJob = 0;
  let wake: (() => void) | undefined;
  let broken: unknown;
  let stopped = false;
  const workers: Worker[] = [];
  const give = (worker: Worker) => {
    if (nextJob >= paths.length) return;
    const index = nextJob++;
    worker.postMessage({ index, path: paths[index]!, settings } satisfies FileJob);
  };
  // The command's thread takes the first file before any worker is given one.
  const local = checkLocally();
  for (let i = 0; i < Math.min(jobs, paths.length) - 1; i++) {
    const worker = moduleWorker(import.meta.url, "validate-worker");
    worker.on("message", (reply: WorkerReply) => {
      const state = states[reply.index]!;
      if ("batch" in reply) state.batches.push(reply.batch);
      else {
        state.end = "done" in reply ? { done: true } : { failed: reply.failed, message: reply.message };
        give(worker);
      }
      wake?.();
    });
    worker.on("error", (err) => {
      broken = err;
      wake?.();
    });
    workers.push(worker);
    give(worker);
  }

  /** The command's thread as a checker: the files not yet taken, one at a time, until none is left. */
  async function checkLocally(): Promise<void> {
    try {
      while (!stopped && nextJob < paths.length) {
        const index = nextJob++;
        const state = states[index]!;
        try {
          const input = await openTranscript(paths[index]!);
          await checkTranscript(input, settings, (lines) => {
            state.batches.push(lines);
            wake?.();
          }, () => stopped);
          state.end = { done: true };
        } catch (err) {
          const failure = err instanceof FileReadError ? err : new FileReadError("read", err);
          state.end = { failed: failure.stage, message: systemErrorText(failure.cause) };
        }
        wake?.();
      }
    } catch (err) {
      broken = err;
      wake?.();
    }
  }

  try {
    for (let index = 0; index < paths.length; index++) {
      const state = states[index]!;
      yield { type: "file", index };
      for (;;) {
        while (state.batches.length > 0) {
          const batch = state.batches.shift()!;
          yield { type: "lines", lines: Array.isArray(batch) ? batch : state.decoder.decode(batch) };
        }
        if (state.end) break;
        if (broken) throw broken;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if ("failed" in state.end) {
        yield { type: "failed", index, stage: state.end.failed, message: state.end.message };
        return;
      }
      states[index] = { batches: [], decoder: new VerdictDecoder(), end: state.end }; // what was reported is let go
    }
  } finally {
    stopped = true;
    await Promise.all([local, ...workers.map((worker) => worker.terminate())]);
  }
}
