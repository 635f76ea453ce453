import type { SessionUpdate } from "../../generated/acp-v1.js";
import type { Event } from "../../generated/ask-v1.0.js";
import type { EventLog } from "../bridge/event-log.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * What `acp --remote` (the relay, src/relay/gateway-relay.ts) asks of the gateway's ACP agent
 * so that an editor behind it loses nothing and runs nothing twice when the relay's connection is
 * cut and made again. All of it travels in `_meta`, which ACP reserves for extensions (protocol
 * §12), and only a connection that asks for it gets any:
 *
 * - `initialize._meta["tau-gateway/relay"]: true`: the connection is a relay's. Each
 *   `session/update` that comes from the session's event log then carries its place there,
 *   `_meta["tau-gateway/at"]: [seq, index]` (the event's seq, and which of the updates made of that
 *   event it is); the relay keeps the last one it passed on, and removes the tag.
 * - the answers to `session/new`, `session/load` and `session/resume` carry the place the
 *   connection takes the session up at, `_meta["tau-gateway/at"]` (after every event so far).
 * - `session/resume._meta["tau-gateway/after"]: [seq, index]`: the new connection is sent what
 *   came after that place first (the rest of that event's updates, then every later event's), then
 *   the live updates, with no gap and nothing twice. `_meta["tau-gateway/ownPrompts"]` names the
 *   turns of the relay's prompts still open, whose user messages the editor shows already.
 * - `session/prompt._meta["tau-gateway/turnId"]: UUID`: the turn's id. The relay repeats a prompt
 *   whose answer the lost connection did not bring with the same id: a prompt whose turn exists (or
 *   is on its way to Tau) rejoins that turn and is answered when it settles, instead of running
 *   the prompt a second time; one that steered into another client's turn is answered by that
 *   steer. The id means something only in its session: the same id in another session is
 *   another prompt.
 */

export const RELAY_META = "tau-gateway/relay";
export const AT_META = "tau-gateway/at";
export const AFTER_META = "tau-gateway/after";
export const OWN_PROMPTS_META = "tau-gateway/ownPrompts";
export const TURN_META = "tau-gateway/turnId";

/** A place in a session's log: an event's seq, and the index of one of the updates made of it. */
export type LogPosition = [seq: number, index: number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const metaOf = (params: unknown): Record<string, unknown> | undefined => (isObject(params) && isObject(params._meta) ? params._meta : undefined);

/** Whether initialize's params ask for the relay's tags. */
export const asksForPositions = (params: unknown): boolean => metaOf(params)?.[RELAY_META] === true;

/** The position a session/resume asks to resume after, if a well-formed one. */
export function resumeAfter(params: unknown): LogPosition | undefined {
  const at = metaOf(params)?.[AFTER_META];
  if (!Array.isArray(at) || at.length !== 2 || !at.every((n) => Number.isSafeInteger(n) && n >= 0)) return undefined;
  return [at[0], at[1]];
}

/** The turn ids a session/resume names as the relay's open prompts. */
export function ownPrompts(params: unknown): string[] {
  const ids = metaOf(params)?.[OWN_PROMPTS_META];
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string" && UUID.test(id)) : [];
}

/** The turn id a session/prompt asks for, if a UUID. */
export function promptTurnId(params: unknown): string | undefined {
  const id = metaOf(params)?.[TURN_META];
  return typeof id === "string" && UUID.test(id) ? id.toLowerCase() : undefined;
}

/**
 * The log's events as a connection resumed after `after` must get them: every event up to it goes
 * through `learn` (the connection's translator learns what the client was told: the tool calls it
 * knows, how much of each message it has), the event at it is given with the updates the client
 * had left out (`skip`), the later ones whole. Undefined when the log cannot say (its events from
 * there are no longer kept, or it is not the log the position came from): the caller resumes live.
 */
export function eventsAfter(log: EventLog, [seq, index]: LogPosition, learn: (event: Event) => void): Array<{ event: Event; skip: number }> | undefined {
  if (seq > log.newestSeq || seq < log.oldestSeq) return undefined;
  let events: Event[];
  try {
    events = log.read(log.oldestSeq - 1).events;
  } catch {
    return undefined;
  }
  const after: Array<{ event: Event; skip: number }> = [];
  for (const event of events) {
    if (event.seq < seq) learn(event);
    else after.push({ event, skip: event.seq === seq ? index + 1 : 0 });
  }
  return after;
}

/** An index past every update an event makes: a place after the whole event. */
const EVERY_UPDATE = Number.MAX_SAFE_INTEGER;

/**
 * The place a relay's connection is at as it takes a session up (session/new, load, resume): after
 * every event the log has now. It comes in the answer's `_meta["tau-gateway/at"]`, so that a cut
 * before any update of the session reached the relay still resumes from there rather than live.
 */
export const placeNow = (log: EventLog): LogPosition => [log.newestSeq, EVERY_UPDATE];

/** A session/update's `_meta` with its place in the log, for a relay's connection. */
export const positionMeta = (at: LogPosition): Record<string, unknown> => ({ [AT_META]: at });

/** Updates with their index among those of one event. */
export const indexed = (updates: SessionUpdate[], skip: number): Array<{ update: SessionUpdate; index: number }> =>
  updates.flatMap((update, index) => (index < skip ? [] : [{ update, index }]));
