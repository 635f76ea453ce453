import type { AskSurface } from "../ask/ask-surface.js";
import { ASK_ERROR_CODES } from "../registry/ask/index.js";
import { attachAskJsonRpc, type AskJsonRpcOptions } from "./ask-jsonrpc.js";

/**
 * The Ask surface over plain HTTP (`POST /rpc`): each request body (a JSON-RPC request,
 * notification or batch) runs through a connection that lives for that one body, with exactly the
 * validation and dispatch of the WebSocket and stdio transports. The HTTP response carries the
 * JSON-RPC response(s); a body of notifications only has none (the caller answers 204).
 *
 * Such a connection cannot receive anything later, so `session/event` notifications (e.g. the
 * backlog of a `session/subscribe`) are not part of the answer: HTTP clients read events with
 * `session/events` or the server-sent events stream.
 */
export async function answerAskHttp(surface: AskSurface, body: string, options: AskJsonRpcOptions): Promise<string | undefined> {
  if (body.trim() === "") return serialize({ jsonrpc: "2.0", id: null, error: { code: ASK_ERROR_CODES.parse_error, message: "Parse error: empty body" } }, options);
  const responses: string[] = [];
  // Notifications (shared messages among them) are left out; only responses answer the body.
  const connection = attachAskJsonRpc(surface, (message) => (typeof message === "string" && isResponseText(message) ? responses.push(message) : undefined), options);
  try {
    await connection.receive(body);
  } finally {
    connection.close();
  }
  if (responses.length <= 1) return responses[0];
  // One body gets one answer; a transport writes a batch's responses at once, so this is a safeguard.
  return `[${responses.map((r) => (r.startsWith("[") ? r.slice(1, -1) : r)).join(",")}]`;
}

/** A response or a batch of responses, as opposed to a notification or a reverse request. */
function isResponseText(text: string): boolean {
  if (text.trimStart().startsWith("[")) return true;
  const message = JSON.parse(text) as Record<string, unknown>;
  return !("method" in message);
}

function serialize(message: Record<string, unknown>, options: AskJsonRpcOptions): string {
  if (options.jsonrpcMember === "include") return JSON.stringify(message);
  const { jsonrpc: _omitted, ...rest } = message;
  return JSON.stringify(rest);
}
