import { parentPort } from "node:worker_threads";
import type { Dialect } from "../../registry/index.js";
import { transcriptVerdicts } from "./transcript-verdicts.js";

/**
 * The worker thread that checks transcripts for the inspector (transcript-check.ts starts it): a
 * check costs time in proportion to the transcript (seconds for megabytes), which here is off the
 * gateway's event loop. A transcript comes as the body's bytes and its verdicts go back as the
 * bytes of their JSON text, both moved between the threads rather than copied: the gateway's loop
 * neither decodes, copies nor serialises megabytes of them, and sends the answer as it is.
 */

export interface TranscriptJob {
  id: number;
  /** The transcript as UTF-8 (invalid sequences read as U+FFFD, as a text body is). */
  bytes: Uint8Array;
  dialect?: Dialect;
}

export type TranscriptJobResult = { id: number; json: Uint8Array } | { id: number; error: string };

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Sent once the worker listens: the gateway posts jobs only after it. */
export interface TranscriptWorkerReady {
  ready: true;
}

parentPort?.on("message", (job: TranscriptJob) => {
  try {
    // encode() makes an array of its own, which can be moved without taking anything else along.
    const json = encoder.encode(JSON.stringify(transcriptVerdicts(decoder.decode(job.bytes), { dialect: job.dialect })));
    parentPort!.postMessage({ id: job.id, json } satisfies TranscriptJobResult, [json.buffer]);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) } satisfies TranscriptJobResult);
  }
});

parentPort?.postMessage({ ready: true } satisfies TranscriptWorkerReady);
