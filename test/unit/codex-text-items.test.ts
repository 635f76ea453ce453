import { describe, expect, it } from "vitest";
import { translatorFixture } from "../support/turn-translator-fixture.js";

/**
 * Which item a streamed chunk goes to: a message's text and thinking are items named after the
 * message (as the thread's history names them), a new message starts a new item even with no tool
 * between, no id is used twice in a turn, and a thread loaded mid-message continues the item the
 * session is streaming. The translator is fed the session's events as the hub logs them.
 */

function translator() {
  const fixture = translatorFixture();
  const items = (method: "item/started" | "item/completed") =>
    fixture.emitted.filter((e) => e.method === method && e.params.item.type !== "userMessage").map((e) => e.params.item);
  return { ...fixture, items };
}

describe("the items streamed text becomes", () => {
  it("are named after their message: its thinking and its text, and a next message's text apart from them", () => {
    const { feed, items } = translator();
    feed("turn.started", { turnId: "t1" });
    feed("model.thinking", { delta: "hmm", messageId: "m1" });
    feed("model.streaming", { delta: "First ", messageId: "m1" });
    feed("model.streaming", { delta: "answer", messageId: "m1" });
    feed("model.streaming", { delta: "Second answer", messageId: "m2" });
    feed("turn.completed", { turnId: "t1", response: "" });
    expect(items("item/completed")).toEqual([
      { type: "reasoning", id: "m1-reasoning", summary: ["hmm"], content: [] },
      { type: "agentMessage", id: "m1", text: "First answer" },
      { type: "agentMessage", id: "m2", text: "Second answer" },
    ]);
    expect(items("item/started").map((i) => i.id)).toEqual(["m1-reasoning", "m1", "m2"]);
  });

  it("never share an id: a message that returns to a kind it had gets a fresh item for it", () => {
    const { feed, items } = translator();
    feed("turn.started", { turnId: "t1" });
    feed("model.streaming", { delta: "before", messageId: "m1" });
    feed("model.thinking", { delta: "thinking again", messageId: "m1" });
    feed("model.streaming", { delta: "after", messageId: "m1" });
    feed("turn.completed", { turnId: "t1", response: "" });
    const ids = items("item/completed").map((i) => i.id);
    expect(ids.slice(0, 2)).toEqual(["m1", "m1-reasoning"]);
    expect(new Set(ids).size).toBe(3);
  });

  it("continue, on a thread loaded mid-message, the item the session is streaming: its rest as deltas, its whole text on completion", () => {
    const { t, emitted, feed, items } = translator();
    t.adoptRunningTurn("t1", { messageId: "m1", type: "agentMessage", text: "Hello, " });
    expect(t.streamingItem).toEqual({ turnId: "t1", id: "m1", text: "Hello, " });
    feed("model.streaming", { delta: "world", messageId: "m1" });
    feed("turn.completed", { turnId: "t1", response: "Hello, world" });
    expect(items("item/started")).toEqual([]);
    expect(emitted.filter((e) => e.method === "item/agentMessage/delta").map((e) => [e.params.itemId, e.params.delta])).toEqual([["m1", "world"]]);
    expect(items("item/completed")).toEqual([{ type: "agentMessage", id: "m1", text: "Hello, world" }]);
  });

  it("take from each chunk only what lies beyond the text the item holds (a snapshot ahead of the events)", () => {
    const { t, emitted, feed, items } = translator();
    // Loaded while "Hello, w" was in the snapshot but the events had carried only "Hello".
    t.adoptRunningTurn("t1", { messageId: "m1", type: "agentMessage", text: "Hello, w" });
    feed("model.streaming", { delta: ", ", messageId: "m1", offset: 5 });
    feed("model.streaming", { delta: "wor", messageId: "m1", offset: 7 });
    feed("model.streaming", { delta: "ld", messageId: "m1", offset: 10 });
    feed("turn.completed", { turnId: "t1", response: "Hello, world" });
    expect(emitted.filter((e) => e.method === "item/agentMessage/delta").map((e) => e.params.delta)).toEqual(["or", "ld"]);
    expect(items("item/completed")).toEqual([{ type: "agentMessage", id: "m1", text: "Hello, world" }]);
  });
});
