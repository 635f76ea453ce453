import { describe, expect, it } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { EventUpdates, type UpdateContext } from "../../src/acp/event-updates.js";
import { draft, type EventDraft } from "../../src/bridge/event-draft.js";
import { StreamMerging } from "../../src/bridge/stream-merging.js";
import { beyondHeld, heldAfter } from "../../src/bridge/streamed-chunks.js";

/**
 * Streamed chunks say where in their message they begin, so a reader that already holds part of a
 * message (history read from a snapshot that ran ahead of the events) takes each part once: the
 * rule itself, ACP's live chunks after a replay, and merging that keeps offsets true.
 */

describe("what of a chunk lies beyond what a reader holds", () => {
  it("is all of it from where the reader stops on, the rest of one that overlaps, nothing of one within", () => {
    expect(beyondHeld(5, { delta: "world", offset: 5 })).toBe("world");
    expect(beyondHeld(7, { delta: "world", offset: 5 })).toBe("rld");
    expect(beyondHeld(10, { delta: "world", offset: 5 })).toBe("");
    expect(beyondHeld(12, { delta: "world", offset: 5 })).toBe("");
    // Text the events never carried (a gap) is not waited for; a chunk without an offset is taken whole.
    expect(beyondHeld(2, { delta: "world", offset: 5 })).toBe("world");
    expect(beyondHeld(9, { delta: "world" })).toBe("world");
    expect([heldAfter(7, { delta: "world", offset: 5 }), heldAfter(12, { delta: "world", offset: 5 }), heldAfter(9, { delta: "world" })]).toEqual([10, 12, 14]);
  });
});

describe("ACP live chunks after session/load's replay", () => {
  it("give only what the replay did not, named after their message", () => {
    const updates = new EventUpdates();
    const context = { snapshot: undefined, commandTools: new Set(), gatedTools: new Set() } as unknown as UpdateContext;
    updates.given("m1", "text", 8); // replayed "Hello, w" while the events had carried "Hello"
    let seq = 0;
    const chunk = (delta: string, offset: number, messageId = "m1") => updates.translate({ type: "model.streaming", seq: ++seq, payload: { delta, messageId, offset } } as Event, context);
    expect(chunk(", ", 5)).toEqual([]);
    expect(chunk("wor", 7)).toEqual([{ sessionUpdate: "agent_message_chunk", messageId: "m1", content: { type: "text", text: "or" } }]);
    expect(chunk("ld", 10)).toEqual([{ sessionUpdate: "agent_message_chunk", messageId: "m1", content: { type: "text", text: "ld" } }]);
    expect(chunk("Next", 0, "m2")).toEqual([{ sessionUpdate: "agent_message_chunk", messageId: "m2", content: { type: "text", text: "Next" } }]);
  });
});

describe("merging chunks that say where they begin", () => {
  it("merges only chunks that follow on, and the merged chunk begins where the first did", async () => {
    const released: EventDraft[] = [];
    const streams = new StreamMerging((d) => released.push(d));
    const of = (delta: string, offset: number) => draft("model.streaming", { delta, messageId: "m1", offset }) as Extract<EventDraft, { type: "model.streaming" }>;
    streams.add(of("Hel", 0));
    streams.add(of("lo", 3));
    streams.add(of("world", 9)); // does not follow on: kept apart
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(released).toEqual([of("Hello", 0), of("world", 9)]);
  });
});
