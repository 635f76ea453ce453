/**
 * Client faults on a WebSocket: frames `ws` refuses (text that is not UTF-8, a message over the
 * size limit, a broken frame). `ws` closes the connection itself with the matching code; for the
 * gateway they are the client's doing, not errors of its own, so they are counted and logged once
 * per connection without a stack (a client sending garbage must not fill the log).
 */

export type ClientFaultKind = "invalid_utf8" | "oversized" | "protocol";

const KIND_BY_CODE: Record<string, ClientFaultKind> = {
  WS_ERR_INVALID_UTF8: "invalid_utf8",
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: "oversized",
  WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH: "oversized",
};

/** The kind of a client fault, or undefined for any other error (the gateway's own). */
export function clientFaultKind(error: unknown): ClientFaultKind | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("WS_ERR_")) return undefined;
  return KIND_BY_CODE[code] ?? "protocol";
}

/** The close code `ws` chose for the fault (kept on the error under a symbol named "status-code"). */
export function faultCloseCode(error: object): number | undefined {
  const key = Object.getOwnPropertySymbols(error).find((s) => s.description === "status-code");
  const value = key === undefined ? undefined : (error as Record<symbol, unknown>)[key];
  return typeof value === "number" ? value : undefined;
}

const DESCRIPTIONS: Record<ClientFaultKind, string> = {
  invalid_utf8: "client sent a text message that is not valid UTF-8",
  oversized: "client message over the size limit",
  protocol: "client broke the WebSocket protocol",
};

/** The one log line of a fault: what happened and how the connection was closed. */
export function describeFault(kind: ClientFaultKind, closeCode: number | undefined): string {
  return closeCode === undefined ? `${DESCRIPTIONS[kind]}: connection closed` : `${DESCRIPTIONS[kind]}: connection closed with ${closeCode}`;
}
