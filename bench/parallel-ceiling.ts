import { Worker } from "node:worker_threads";
import { now, round } from "./stats.js";

/**
 * How far two threads scale on this machine right now: the same fixed CPU work (JSON.parse of a
 * small message, no I/O, no messages between threads) in one worker thread, then in two at once,
 * each ratio the work done per second. On a quiet machine with two free cores it is close to 2×;
 * on a shared one, other processes take the second core, and `validate --jobs 2` cannot scale
 * beyond what this shows. Measured beside the `--jobs` row so that row can be read.
 */

const WORK = `
const { parentPort } = require("node:worker_threads");
const text = JSON.stringify({ version: 18, type: "delta", sessionId: "s1", seq: 1, changes: [{ kind: "message.content.append", text: "abcdefgh" }] });
let n = 0;
for (let i = 0; i < 400000; i++) n += JSON.parse(text).seq;
parentPort.postMessage(n);
`;

const runThreads = (threads: number) =>
  Promise.all(
    Array.from({ length: threads }, () => new Promise<void>((resolve, reject) => {
      const worker = new Worker(WORK, { eval: true });
      worker.once("message", () => void worker.terminate().then(() => resolve()));
      worker.once("error", reject);
    })),
  );

/** Work per second of two threads over one thread's (best of `rounds` alternated pairs). */
export async function parallelCeiling(rounds = 3): Promise<number> {
  let best = 0;
  for (let i = 0; i < rounds; i++) {
    let started = now();
    await runThreads(1);
    const one = now() - started;
    started = now();
    await runThreads(2);
    const two = now() - started;
    best = Math.max(best, (2 * one) / two);
  }
  return round(best, 2);
}
