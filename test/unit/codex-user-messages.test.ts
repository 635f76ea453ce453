import { describe, expect, it } from "vitest";
import { translatorFixture } from "../support/turn-translator-fixture.js";

/**
 * User messages that join a running turn without a turn of their own (Tau v18 steering at a safe
 * boundary, a message a Tau client records): the embedded host starts a turn for every message, so
 * a real gateway cannot be made to produce one on cue. The translator is fed the session's events
 * as the hub logs them; what it emits is recorded.
 */

const translator = () => translatorFixture([{ type: "text", text: "first", text_elements: [] }]);

const items = (emitted: Array<{ method: string; params: any }>) =>
  emitted.filter((e) => e.method === "item/started" || e.method === "item/completed").map((e) => [e.method, e.params.item.type, e.params.item.id]);

describe("a user message added to a running turn", () => {
  it("is a userMessage item of its own, after the text before it; the turn's first prompt is not repeated", () => {
    const { emitted, feed } = translator();
    feed("turn.started", { turnId: "t1" });
    feed("user.message", { messageId: "t1", turnId: "t1", text: "first" });
    feed("model.streaming", { delta: "Working" });
    feed("user.message", { messageId: "m-steer", turnId: "t1", text: "also this" });
    const started = emitted.find((e) => e.method === "item/started" && e.params.item.id === "m-steer-input")!;
    expect(started.params.item).toEqual({ type: "userMessage", id: "m-steer-input", content: [{ type: "text", text: "also this", text_elements: [] }] });
    expect(items(emitted).map(([method, type]) => `${method} ${type}`)).toEqual([
      "item/started userMessage",
      "item/completed userMessage",
      "item/started agentMessage",
      "item/completed agentMessage",
      "item/started userMessage",
      "item/completed userMessage",
    ]);
  });

  it("is not an item while no turn runs (Codex items belong to turns)", () => {
    const { emitted, feed } = translator();
    feed("user.message", { messageId: "m-recorded", text: "noted" });
    expect(emitted).toEqual([]);
  });
});
