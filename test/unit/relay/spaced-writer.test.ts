import { afterEach, describe, expect, it, vi } from "vitest";
import { SpacedWriter } from "../../../src/relay/spaced-writer.js";

/** The relay's stdout for Codex: what follows a response is written in a later read, order kept. */
describe("the relay's spaced writer", () => {
  // The pause is measured on vitest's clock, so a loaded machine neither slows nor skews it.
  afterEach(() => void vi.useRealTimers());

  it("holds what follows a response for the pause, then writes it in order; other lines go at once", async () => {
    vi.useFakeTimers();
    const written: Array<{ line: string; at: number }> = [];
    const start = Date.now();
    const writer = new SpacedWriter((line) => written.push({ line, at: Date.now() - start }), 40);
    writer.push("notification 1");
    writer.push("response", true);
    writer.push("notification 2");
    writer.push("notification 3");
    expect(written.map((w) => w.line)).toEqual(["notification 1", "response"]);
    await vi.advanceTimersByTimeAsync(60);
    expect(written.map((w) => w.line)).toEqual(["notification 1", "response", "notification 2", "notification 3"]);
    expect(written[2]!.at - written[1]!.at).toBeGreaterThanOrEqual(35);
  });

  it("never holds a response: 2,000 requests answered one after the other are written at once, with no timer set", () => {
    vi.useFakeTimers();
    const written: string[] = [];
    const writer = new SpacedWriter((line) => written.push(line), 25);
    for (let i = 0; i < 2_000; i++) writer.push(`response ${i}`, true);
    // Bounded work: every answer written in the call that pushed it, none waiting for a pause.
    expect(written).toHaveLength(2_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a response passes notifications still waiting out an earlier pause; those keep their order and their own pause", async () => {
    vi.useFakeTimers();
    const written: string[] = [];
    const writer = new SpacedWriter((line) => written.push(line), 40);
    writer.push("response 1", true);
    writer.push("notification 1");
    await vi.advanceTimersByTimeAsync(20);
    writer.push("response 2", true);
    writer.push("notification 2");
    expect(written).toEqual(["response 1", "response 2"]);
    await vi.advanceTimersByTimeAsync(25);
    expect(written).toEqual(["response 1", "response 2", "notification 1"]);
    await vi.advanceTimersByTimeAsync(20);
    expect(written).toEqual(["response 1", "response 2", "notification 1", "notification 2"]);
  });

  it("writes everything waiting at once when flushed, and without a pause never waits", () => {
    const written: string[] = [];
    const writer = new SpacedWriter((line) => written.push(line), 10_000);
    writer.push("response", true);
    writer.push("notification");
    writer.flush();
    expect(written).toEqual(["response", "notification"]);

    const direct: string[] = [];
    const unpaused = new SpacedWriter((line) => direct.push(line), undefined);
    unpaused.push("response", true);
    unpaused.push("notification");
    expect(direct).toEqual(["response", "notification"]);
  });
});
