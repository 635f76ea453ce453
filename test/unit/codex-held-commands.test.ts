import { describe, expect, it } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { TurnTranslator } from "../../src/codex/turn-translator.js";

/**
 * The two ways a command item held back while its call's gating is unknown may still start that a
 * real gateway cannot be made to take on cue (they depend on which of two connections Tau writes to
 * first): its turn ends before the call is decided, and the session's gating stops asking. The
 * translator is fed the session's events as the hub logs them; what it emits is recorded.
 */

function translator(mayAsk: () => boolean) {
  const emitted: string[] = [];
  const t = new TurnTranslator({
    threadId: "thr",
    cwd: () => "/work",
    catalog: () => ({ commandTools: new Map([["deploy", { name: "deploy", description: "", parameters: { type: "object" }, command: "deploy" }]]), dynamicTools: new Set() }),
    userInput: () => [],
    contextWindow: () => undefined,
    mayAsk,
    emit: (method, params) => emitted.push(method === "item/started" || method === "item/completed" ? `${method} ${(params as { item: { type: string } }).item.type}` : method),
    turnEnded: () => undefined,
  });
  let seq = 0;
  const feed = (type: Event["type"], payload: Record<string, unknown>) => t.event({ type, seq: ++seq, payload } as Event);
  feed("turn.started", { turnId: "t1" });
  feed("tool.use", { id: "call-1", name: "deploy", args: {} });
  emitted.length = 0;
  return { t, emitted, feed };
}

describe("a command item held while its call's gating is unknown", () => {
  it("starts when its turn ends undecided, before the turn's end, with no completion", () => {
    const { emitted, feed } = translator(() => true);
    expect(emitted).toEqual([]);
    feed("turn.aborted", { turnId: "t1" });
    expect(emitted).toEqual(["item/started commandExecution", "thread/status/changed", "turn/completed"]);
  });

  it("starts once the session's gating no longer asks, and only once", () => {
    let asks = true;
    const { t, emitted, feed } = translator(() => asks);
    t.gatingChanged();
    expect(emitted).toEqual([]);
    asks = false;
    t.gatingChanged();
    feed("tool.result", { id: "call-1", name: "deploy", output: "done", isError: false });
    expect(emitted).toEqual(["item/started commandExecution", "item/commandExecution/outputDelta", "item/completed commandExecution"]);
  });
});
