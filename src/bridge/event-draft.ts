import type { Events } from "../../generated/ask-v1.0.js";

/** An Ask event before the log gives it a `seq`: what the translator and the interactions produce. */
export type EventDraft = { [T in keyof Events]: { type: T; payload: Events[T] } }[keyof Events];

/** Builds a draft with its payload type checked against the event type. */
export function draft<T extends keyof Events>(type: T, payload: Events[T]): EventDraft {
  return { type, payload } as EventDraft;
}
