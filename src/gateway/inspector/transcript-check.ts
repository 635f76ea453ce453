import type { Worker } from "node:worker_threads";
import type { Dialect } from "../../registry/index.js";
import { moduleWorker } from "../../shared/module-worker.js";
import type { TranscriptJob, TranscriptJobResult, TranscriptWorkerReady } from "./transcript-worker.js";

/**
 * Transcript checks of the inspector, in one worker thread (transcript-worker.ts), off the
 * gateway's event loop: one check at a time, a few waiting (more are refused at once), each
 * bounded in time (past it the worker is ended, and the next check starts a new one) and in memory
 * (the worker's heap). The worker is started at the first check and ended once idle.
 */

/** How long one check may take: a transcript of the largest size the route takes is checked in a few seconds. */
export const DEFAULT_TRANSCRIPT_CHECK_MS = 30_000;
/** Checks waiting for the worker, besides the one it runs. */
export const TRANSCRIPT_CHECKS_WAITING = 4;
/** The worker's heap: a check holds the transcript, its messages and its verdicts. */
const WORKER_HEAP_MB = 512;
/** An idle worker is ended after this long. */
const IDLE_MS = 30_000;

export type TranscriptCheckOutcome =
  | { ok: true; json: Buffer }
  | { ok: false; reason: "busy" | "timeout" | "failed"; message: string };

interface Waiting {
  job: TranscriptJob;
  done(outcome: TranscriptCheckOutcome): void;
}

export class TranscriptChecks {
  private worker: Worker | undefined;
  /** Jobs wait here until the worker says it listens: a message posted before is lost on some Node versions (24). */
  private workerReady: Promise<void> | undefined;
  private running: (Waiting & { timer: NodeJS.Timeout }) | undefined;
  private readonly waiting: Waiting[] = [];
  private nextId = 1;
  private idle: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs = DEFAULT_TRANSCRIPT_CHECK_MS) {}

  /** Checks a transcript: text, or its UTF-8 bytes (a Buffer is moved to the worker when it owns its memory, else copied). */
  check(transcript: string | Uint8Array, dialect: Dialect | undefined): Promise<TranscriptCheckOutcome> {
    if (this.waiting.length >= TRANSCRIPT_CHECKS_WAITING) {
      return Promise.resolve({ ok: false, reason: "busy", message: `${TRANSCRIPT_CHECKS_WAITING + 1} transcripts are being checked or wait to be; try again once they are done` });
    }
    return new Promise((done) => {
      this.waiting.push({ job: { id: this.nextId++, bytes: movable(transcript), dialect }, done });
      this.startNext();
    });
  }

  /** Ends the worker (a check running is answered as failed). */
  async close(): Promise<void> {
    clearTimeout(this.idle);
    for (const waiting of this.waiting.splice(0)) waiting.done({ ok: false, reason: "failed", message: "the gateway is stopping" });
    this.finish({ ok: false, reason: "failed", message: "the gateway is stopping" });
    await this.endWorker();
  }

  private startNext(): void {
    if (this.running) return;
    const next = this.waiting.shift();
    if (!next) {
      clearTimeout(this.idle);
      this.idle = setTimeout(() => void this.endWorker(), IDLE_MS).unref();
      return;
    }
    clearTimeout(this.idle);
    const worker = this.ensureWorker();
    const timer = setTimeout(() => {
      // A check past its time is ended with its worker: there is no stopping it otherwise.
      this.finish({ ok: false, reason: "timeout", message: `checking the transcript took more than ${this.timeoutMs} ms; run tau-gateway validate on it` });
      void this.endWorker().then(() => this.startNext());
    }, this.timeoutMs);
    this.running = { ...next, timer };
    void this.workerReady!.then(() => {
      if (this.worker === worker && this.running?.job === next.job) worker.postMessage(next.job, [next.job.bytes.buffer as ArrayBuffer]);
    });
  }

  private finish(outcome: TranscriptCheckOutcome, id?: number): void {
    const running = this.running;
    if (!running || (id !== undefined && running.job.id !== id)) return;
    clearTimeout(running.timer);
    this.running = undefined;
    running.done(outcome);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = moduleWorker(import.meta.url, "transcript-worker", { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    worker.unref();
    let ready!: () => void;
    this.workerReady = new Promise((resolve) => (ready = resolve));
    worker.on("message", (result: TranscriptJobResult | TranscriptWorkerReady) => {
      if ("ready" in result) return ready();
      this.finish("json" in result ? { ok: true, json: Buffer.from(result.json.buffer, result.json.byteOffset, result.json.byteLength) } : { ok: false, reason: "failed", message: `the check failed: ${result.error}` }, result.id);
      this.startNext();
    });
    const gone = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.finish({ ok: false, reason: "failed", message: `the check failed: ${why}` });
      this.startNext();
    };
    worker.on("error", (error) => gone(error.message));
    worker.on("exit", (code) => gone(`its worker exited (${code})`));
    this.worker = worker;
    return worker;
  }

  private async endWorker(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}

/** Bytes that can be moved to the worker: an array that owns its whole memory (a Buffer may be a view of a shared pool). */
function movable(transcript: string | Uint8Array): Uint8Array {
  if (typeof transcript === "string") return new TextEncoder().encode(transcript);
  const own = transcript.byteOffset === 0 && transcript.byteLength === transcript.buffer.byteLength && transcript.buffer instanceof ArrayBuffer;
  return own ? transcript : new Uint8Array(transcript);
}
