import type { Event } from "../../generated/ask-v1.0.js";
import type { UserInput } from "../../generated/codex-v2.js";
import { TurnTranslator } from "../../src/codex/turn-translator.js";

/** A Codex notification the translator emitted, as recorded. */
export type Emitted = { method: string; params: any };

/**
 * A Codex turn translator on its own, for unit tests: fed the session's events as the hub logs
 * them (`feed`, with seqs counting from 1), every notification it emits recorded. `userInput` is
 * what the thread's snapshot says a turn was started with.
 */
export function translatorFixture(userInput: UserInput[] = []) {
  const emitted: Emitted[] = [];
  const t = new TurnTranslator({
    threadId: "thr",
    cwd: () => "/work",
    catalog: () => ({ commandTools: new Map(), dynamicTools: new Set() }),
    userInput: () => userInput,
    contextWindow: () => undefined,
    mayAsk: () => false,
    emit: (method, params) => emitted.push({ method, params }),
    turnEnded: () => undefined,
  });
  let seq = 0;
  const feed = (type: Event["type"], payload: Record<string, unknown>) => t.event({ type, seq: ++seq, payload } as Event);
  return { t, emitted, feed };
}
