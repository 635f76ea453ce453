import { monitorEventLoopDelay } from "node:perf_hooks";

/**
 * The longest the event loop of this process was held while `work` ran, in ms, as
 * perf_hooks.monitorEventLoopDelay measures it (10 ms resolution). Tests of a gateway that runs in
 * the test's own process assert on it that a hostile input is refused without holding the loop:
 * work proportional to the input shows as seconds, bounded work as a few tens of ms at most.
 */
export async function worstStallMs<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  // The monitor records nothing until its timer has fired once: armed before the work starts, a
  // stall in the work's first few milliseconds is seen too (reset() would disarm it again).
  await new Promise((resolve) => setTimeout(resolve, 30));
  try {
    const result = await work();
    // One more turn, so a stall at the very end is sampled too.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { result, stallMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}
