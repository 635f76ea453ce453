import { describe, expect, it } from "vitest";
import { RelayRejoins } from "../../../src/relay/rejoins.js";
import type { OpenRequest } from "../../../src/relay/requests.js";

/** What the gateway sends while a resent prompt is open waits for its answer; a lost link lets it go. */

function openRequest(): OpenRequest {
  let settle!: () => void;
  const answered = new Promise<void>((resolve) => (settle = resolve));
  return { id: 1, method: "session/send", params: {}, batch: undefined, sentOn: undefined, settle, answered };
}

describe("the relay's rejoins", () => {
  it("on a lost link passes on what waited even while the prompt is still open, once, not back into waiting", async () => {
    const passed: string[] = [];
    // As the relay does: what is released goes through its handling of the gateway's messages again.
    const rejoins: RelayRejoins = new RelayRejoins(true, (text) => {
      if (!rejoins.holds(text, false)) passed.push(text);
    });
    const request = openRequest();
    rejoins.add(request);
    expect(rejoins.holds("event 2", false)).toBe(true);
    expect(rejoins.holds("event 3", false)).toBe(true);

    rejoins.releaseAll();
    expect(passed).toEqual(["event 2", "event 3"]);
    // Still open: what comes next waits again, and the answer releases it, and nothing twice.
    expect(rejoins.holds("event 4", false)).toBe(true);
    request.settle();
    await request.answered;
    await Promise.resolve();
    expect(passed).toEqual(["event 2", "event 3", "event 4"]);
  });
});
