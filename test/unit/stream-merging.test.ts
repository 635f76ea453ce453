import { describe, expect, it } from "vitest";
import { draft, type EventDraft } from "../../src/bridge/event-draft.js";
import { isMergeable, MAX_MERGED_CHARS, StreamMerging } from "../../src/bridge/stream-merging.js";

/**
 * The merging rule on its own: which drafts merge, what releases a waiting chunk, and the bound
 * on a merged chunk. The session hub tests check it on real Tau deltas.
 */

const endOfTick = () => new Promise<void>((resolve) => setImmediate(resolve));

function merging() {
  const released: EventDraft[] = [];
  const streams = new StreamMerging((d) => released.push(d));
  /** What a hub does with a draft: streamed chunks go to the merger, anything else releases it first. */
  const publish = (d: EventDraft) => {
    if (isMergeable(d)) streams.add(d);
    else {
      streams.flush();
      released.push(d);
    }
  };
  return { released, publish };
}

const text = (delta: string) => draft("model.streaming", { delta });
const thinking = (delta: string) => draft("model.thinking", { delta });

describe("StreamMerging", () => {
  it("merges consecutive chunks of one kind within a tick, releases them at its end, text unchanged", async () => {
    const { released, publish } = merging();
    for (const chunk of ["You said", ": hello ", "world"]) publish(text(chunk));
    expect(released).toEqual([]);
    await endOfTick();
    expect(released).toEqual([text("You said: hello world")]);
  });

  it("keeps kinds and other events in their order: a different event releases the waiting chunk first", async () => {
    const { released, publish } = merging();
    publish(thinking("let "));
    publish(thinking("me see"));
    publish(text("The "));
    publish(text("answer"));
    publish(draft("tool.use", { id: "t1", name: "bash" }));
    publish(text("done"));
    publish(draft("turn.completed", { turnId: "x", response: "The answerdone", inputTokens: 1, outputTokens: 1, cost: 0 }));
    expect(released.map((d) => d.type)).toEqual(["model.thinking", "model.streaming", "tool.use", "model.streaming", "turn.completed"]);
    expect(released.slice(0, 2)).toEqual([thinking("let me see"), text("The answer")]);
    await endOfTick();
    expect(released).toHaveLength(5);
  });

  it("chunks of different messages stay separate events, each naming its message", async () => {
    const { released, publish } = merging();
    const of = (messageId: string, delta: string) => draft("model.streaming", { delta, messageId });
    publish(of("m1", "first "));
    publish(of("m1", "reply"));
    publish(of("m2", "second "));
    publish(of("m2", "reply"));
    await endOfTick();
    expect(released).toEqual([of("m1", "first reply"), of("m2", "second reply")]);
  });

  it("chunks of different ticks stay separate events", async () => {
    const { released, publish } = merging();
    publish(text("one "));
    await endOfTick();
    publish(text("two"));
    await endOfTick();
    expect(released).toEqual([text("one "), text("two")]);
  });

  it(`a merged chunk stops growing at ${MAX_MERGED_CHARS} characters; a single longer chunk stays whole`, async () => {
    const { released, publish } = merging();
    const piece = "x".repeat(1000);
    const pieces = Math.ceil((MAX_MERGED_CHARS * 1.5) / piece.length);
    for (let i = 0; i < pieces; i++) publish(text(piece));
    const long = "y".repeat(MAX_MERGED_CHARS + 10);
    publish(text(long));
    await endOfTick();
    const deltas = released.map((d) => (d.payload as { delta: string }).delta);
    expect(deltas.join("")).toBe(piece.repeat(pieces) + long);
    expect(deltas.slice(0, -1).every((d) => d.length <= MAX_MERGED_CHARS)).toBe(true);
    expect(deltas[0]!.length).toBe(Math.floor(MAX_MERGED_CHARS / piece.length) * piece.length);
    expect(deltas.at(-1)).toBe(long);
  });
});
