import type { Change, ServerMessages } from "../../../generated/tau-v18.js";

/**
 * Whether each kind becomes events or is deliberately ignored. The tables are exhaustive over the
 * generated unions, so a kind the registry adds does not compile until it is placed here; a kind
 * marked translated that the translator's `change` (or the hub) does not handle does not compile either.
 */
type Handling = "translated" | "ignored";

type ChangeKind = Change["type"];

/** Every change kind of a patch. Ignored ones are bookkeeping, or state Ask has no event for. */
const CHANGE_KINDS = {
  "turn.set": "translated",
  "message.append": "translated",
  "message.replace": "translated",
  "message.content.append": "translated",
  "tool.set": "translated",
  "operation.set": "translated",
  "timeline.append": "translated",
  "agent-state.set": "ignored", // model-context bookkeeping
  "lifecycle.set": "ignored", // turn.set says the same per turn
  "cost.set": "ignored", // reported per turn in turn.completed
  "settings.set": "ignored",
  "timeline.remove": "ignored",
  "timeline.advance": "ignored",
  "tool.remove": "ignored",
  "operation.remove": "ignored",
  "agent.set": "translated", // subagent.started / subagent.completed
  "agent.remove": "translated", // subagent.removed
  "facet.set": "ignored", // client-facing metadata Ask does not model
  "facet.remove": "ignored",
} as const satisfies Record<ChangeKind, Handling>;

export type IgnoredChangeKind = KindsHandled<typeof CHANGE_KINDS, "ignored">;

type ServerMessageType = keyof ServerMessages;

/**
 * Every Tau server message type. The hub translates the session streams; client-tool messages
 * become interactions elsewhere; the rest produce no events.
 */
const SERVER_MESSAGE_TYPES = {
  "session.delta": "translated",
  "session.pendingUserMessages": "translated",
  "session.ephemeral": "translated",
  "session.subagentActivities": "translated", // subagent.activity
  ready: "ignored",
  response: "ignored",
  "session.clientTool.call": "ignored",
  "session.clientTool.cancel": "ignored",
} as const satisfies Record<ServerMessageType, Handling>;

export type IgnoredServerMessageType = KindsHandled<typeof SERVER_MESSAGE_TYPES, "ignored">;

type KindsHandled<Table extends Record<string, Handling>, H extends Handling> = {
  [K in keyof Table]: Table[K] extends H ? K : never;
}[keyof Table];

const kindsHandled = <K extends string>(table: Record<K, Handling>, handling: Handling): K[] =>
  (Object.keys(table) as K[]).filter((kind) => table[kind] === handling);

/** Change kinds that produce events. */
export const TRANSLATED_CHANGES: readonly ChangeKind[] = kindsHandled(CHANGE_KINDS, "translated");
/** Change kinds with nothing for an Ask client. */
export const IGNORED_CHANGES: readonly ChangeKind[] = kindsHandled(CHANGE_KINDS, "ignored");
/** Server messages whose content becomes events. */
export const TRANSLATED_SERVER_MESSAGES: readonly ServerMessageType[] = kindsHandled(SERVER_MESSAGE_TYPES, "translated");
/** Server messages that produce no events here. */
export const IGNORED_SERVER_MESSAGES: readonly ServerMessageType[] = kindsHandled(SERVER_MESSAGE_TYPES, "ignored");
