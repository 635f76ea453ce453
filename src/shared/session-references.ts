import { isObject } from "./unknown-values.js";

/**
 * How the gateway names a Tau session inside a message that has no session member of its own (MCP's
 * tool calls, resources and forms): a `tau://session/ID` URI and a `_meta` key of the gateway's.
 * The MCP surface writes them and the inspector reads them, so they sit below both.
 */

/** The URI of a session's transcript resource. */
export const sessionUri = (sessionId: string) => `tau://session/${encodeURIComponent(sessionId)}`;

/** The session a transcript URI names, or undefined when the URI is no session's. */
export function sessionOfUri(uri: string): string | undefined {
  const match = /^tau:\/\/session\/([^/?#]+)$/.exec(uri);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}

/**
 * The `_meta` key naming the Tau session a message of the gateway's is about (a tool call's
 * progress, a form), so that a client — and the inspector — can tell which session it belongs to
 * when the message has no other place for it (MCP's `_meta` names: a prefix, a slash, a name).
 */
export const SESSION_META_KEY = "tau-gateway/sessionId";

export const sessionMeta = (sessionId: string): { [SESSION_META_KEY]: string } => ({ [SESSION_META_KEY]: sessionId });

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * The session an MCP message names, wherever MCP puts it: a tool's arguments (`sessionId`) or its
 * structured result, a transcript URI (`tau://session/ID`: resources/read, subscribe, updated), a
 * log message's data, or the gateway's `_meta` key.
 */
export function referencedSession(message: Record<string, unknown>): string | undefined {
  const { params, result } = message;
  if (isObject(params)) {
    const found =
      (isObject(params._meta) ? text(params._meta[SESSION_META_KEY]) : undefined) ??
      (isObject(params.arguments) ? text(params.arguments.sessionId) : undefined) ??
      (isObject(params.data) ? text(params.data.sessionId) : undefined) ??
      (typeof params.uri === "string" ? sessionOfUri(params.uri) : undefined);
    if (found) return found;
  }
  if (isObject(result)) {
    if (isObject(result.structuredContent)) {
      const found = text(result.structuredContent.sessionId);
      if (found) return found;
    }
    if (Array.isArray(result.contents)) {
      for (const content of result.contents) if (isObject(content) && typeof content.uri === "string" && sessionOfUri(content.uri)) return sessionOfUri(content.uri);
    }
  }
  return undefined;
}
