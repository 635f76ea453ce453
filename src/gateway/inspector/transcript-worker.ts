import { parentPort } from "node:worker_threads";
import type { Dialect } from "../../registry/index.js";
import { transcriptVerdicts } from "./transcript-verdicts.js";

/**
 * The worker thread that checks transcripts for the inspector (transcript-check.ts starts it): a
 * check costs time in proportion to the transcript (seconds for megabytes), which here is off the
 * gateway's event loop. Each job's verdicts go back as JSON text, so the gateway sends them as
 * they are instead of serialising them on its loop.
 */

export interface TranscriptJob {
  id: number;
  text: string;
  dialect?: Dialect;
}

export type TranscriptJobResult = { id: number; json: string } | { id: number; error: string };

/** Sent once the worker listens: the gateway posts jobs only after it. */
export interface TranscriptWorkerReady {
  ready: true;
}

parentPort?.on("message", (job: TranscriptJob) => {
  try {
    parentPort!.postMessage({ id: job.id, json: JSON.stringify(transcriptVerdicts(job.text, { dialect: job.dialect })) } satisfies TranscriptJobResult);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) } satisfies TranscriptJobResult);
  }
});

parentPort?.postMessage({ ready: true } satisfies TranscriptWorkerReady);
