import type { RecordedDialect } from "../../transports/recording/transcript-lines.js";
import { referencedSession } from "../../shared/session-references.js";
import { isObject } from "../../shared/unknown-values.js";

/**
 * What the inspector reads off one message to show, pair and filter it, whatever its dialect:
 * JSON-RPC (Ask, Codex, ACP) or Tau's envelope (`type` request/response/event).
 */

export type FrameKind = "request" | "notification" | "response" | "error" | "event" | "other";

export interface FrameFacts {
  kind: FrameKind;
  /** The method (requests, notifications) or the Tau message type of an event. */
  method?: string;
  /** The id of a request or response, as sent. */
  id?: string | number;
  /** The session or thread the message is about, when it names one. */
  session?: string;
}

const isId = (v: unknown): v is string | number => typeof v === "string" || typeof v === "number";

export function frameFacts(dialect: RecordedDialect, message: unknown): FrameFacts {
  if (!isObject(message)) return { kind: "other" };
  const id = isId(message.id) ? message.id : undefined;
  // A message without a session member (MCP's) may still name one where the gateway puts it: tool
  // arguments, structured results, transcript URIs, the gateway's _meta key.
  const session = sessionOf(message) ?? referencedSession(message);
  if (dialect === "tau") {
    const method = typeof message.method === "string" ? message.method : typeof message.type === "string" ? message.type : undefined;
    if (message.type === "request") return { kind: "request", method, id, session };
    if (message.type === "response") return { kind: message.ok === false ? "error" : "response", id, session };
    return { kind: "event", method, session };
  }
  if (typeof message.method === "string") return { kind: "id" in message ? "request" : "notification", method: message.method, id, session };
  if ("error" in message) return { kind: "error", id, session };
  if ("result" in message) return { kind: "response", id, session };
  return { kind: "other", id, session };
}

/** Names of the members that carry a session in the four dialects (Codex calls it a thread). */
const SESSION_KEYS = ["sessionId", "threadId", "session_id", "session"] as const;

/** The session named in the params, result or body of a message (one level down, and `thread.id`). */
function sessionOf(message: Record<string, unknown>): string | undefined {
  for (const holder of [message.params, message.result, message]) {
    if (!isObject(holder)) continue;
    for (const key of SESSION_KEYS) {
      const value = holder[key];
      if (typeof value === "string" && value !== "") return value;
    }
    if (isObject(holder.thread) && typeof holder.thread.id === "string") return holder.thread.id;
    if (isObject(holder.session) && typeof holder.session.id === "string") return holder.session.id;
  }
  return undefined;
}

/** `{name, version}` of an `initialize` request's clientInfo (Codex, ACP) or client (Ask), when given. */
export function clientInfo(message: unknown): { name?: string; version?: string } | undefined {
  if (!isObject(message) || message.method !== "initialize" || !isObject(message.params)) return undefined;
  const info = message.params.clientInfo ?? message.params.client;
  if (!isObject(info)) return undefined;
  const name = typeof info.name === "string" ? info.name : undefined;
  const version = typeof info.version === "string" ? info.version : undefined;
  return name === undefined && version === undefined ? undefined : { name, version };
}
