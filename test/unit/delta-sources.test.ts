import { describe, expect, it } from "vitest";
import { DeltaSources } from "../../src/bridge/delta-sources.js";

/** Which Tau deltas each event came from (the inspector hangs a /tau client's deltas under it). */
describe("DeltaSources", () => {
  it("names the delta being translated, the deltas of merged chunks, and nothing outside a translation", () => {
    const sources = new DeltaSources(10);
    expect(sources.current()).toBeUndefined();
    sources.translate(5, () => sources.record(1, sources.current()));
    sources.translate(6, () => sources.chunkWaits());
    sources.translate(7, () => sources.chunkWaits());
    sources.record(2, sources.takeStreamed());
    sources.record(3, sources.takeStreamed());
    sources.record(4, sources.current());
    expect([1, 2, 3, 4].map((seq) => sources.of(seq))).toEqual([{ from: 5, to: 5 }, { from: 6, to: 7 }, undefined, undefined]);
  });

  it("remembers the newest events only", () => {
    const sources = new DeltaSources(2);
    for (const seq of [1, 2, 3]) sources.translate(seq * 10, () => sources.record(seq, sources.current()));
    expect([1, 2, 3].map((seq) => sources.of(seq)?.from)).toEqual([undefined, 20, 30]);
  });
});
