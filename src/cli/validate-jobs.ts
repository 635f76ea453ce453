import type { Worker } from "node:worker_threads";
import { moduleWorker } from "../shared/module-worker.js";
import type { CheckedLine, FileSettings } from "./validate-file.js";
import type { FileJob, WorkerReply } from "./validate-worker.js";
import { VerdictDecoder, type VerdictBatch } from "./verdict-batches.js";

/**
 * `tau-gateway validate --jobs N`: the files checked by N worker threads at once, each file whole
 * by one worker (ids are correlated within a file), and what was found handed on in the files'
 * order, as one thread would have found it: a file's verdicts wait until every file before it is
 * done.
 */

export type CheckedEvent =
  | { type: "file"; index: number }
  | { type: "lines"; lines: CheckedLine[] }
  | { type: "failed"; index: number; stage: "open" | "read"; message: string };

interface FileState {
  /** Batches received and not yet handed on (decoded only then, so a waiting file holds the compact form). */
  batches: VerdictBatch[];
  decoder: VerdictDecoder;
  end?: { done: true } | { failed: "open" | "read"; message: string };
}

export async function* checkFilesInWorkers(paths: readonly string[], settings: FileSettings, jobs: number): AsyncGenerator<CheckedEvent> {
  const states = paths.map((): FileState => ({ batches: [], decoder: new VerdictDecoder() }));
  let nextJob = 0;
  let wake: (() => void) | undefined;
  let broken: Error | undefined;
  const workers: Worker[] = [];
  const give = (worker: Worker) => {
    if (nextJob >= paths.length) return;
    const index = nextJob++;
    worker.postMessage({ index, path: paths[index]!, settings } satisfies FileJob);
  };
  for (let i = 0; i < Math.min(jobs, paths.length); i++) {
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
  try {
    for (let index = 0; index < paths.length; index++) {
      const state = states[index]!;
      yield { type: "file", index };
      for (;;) {
        while (state.batches.length > 0) yield { type: "lines", lines: state.decoder.decode(state.batches.shift()!) };
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
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
