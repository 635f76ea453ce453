import type { Event } from "../../generated/ask-v1.0.js";

/** An Ask event before the log gives it a `seq`: what the translator and the interactions produce. */
export type EventDraft = { [T in Event["type"]]: { type: T; payload: Extract<Event, { type: T }>["payload"] } }[Event["type"]];

/** Builds a draft with its payload type checked against the event type. */
export function draft<T extends Event["type"]>(type: T, payload: Extract<Event, { type: T }>["payload"]): EventDraft {
  return { type, payload } as EventDraft;
}
