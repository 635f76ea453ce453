import { describe, expect, it } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { streamProblems } from "../fuzz/oracles/relay-oracle.js";

const streaming = (seq: number, delta: string) => ({ seq, type: "model.streaming", payload: { delta } }) as unknown as Event;

describe("the relay fuzz oracle's stream check", () => {
  it("compares the events both sides have: a client ahead of the gateway's held log is owed nothing more", () => {
    const gateway = [streaming(1, "You said: a"), streaming(2, "b")];
    // The client also has a later turn's text, which reached it after the log was held.
    const client = [...gateway, streaming(3, "You said: c")];
    expect(streamProblems(client, gateway)).toEqual([]);
  });

  it("names a client that is short of the gateway, or whose text differs", () => {
    const gateway = [streaming(1, "You said: a"), streaming(2, "b")];
    expect(streamProblems(gateway.slice(0, 1), gateway)).toEqual(["the client saw 1 events of the session, the gateway has 2"]);
    const problems = streamProblems([streaming(1, "You said: a"), streaming(2, "x")], gateway);
    expect(problems.some((p) => p.startsWith("the streamed text the client saw is not the gateway's"))).toBe(true);
  });
});
