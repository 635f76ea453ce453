import { JSON_BOUNDS, jsonBoundsError, topLevelId, type JsonBounds, type JsonBoundsError } from "../shared/json-bounds.js";
import { isObject } from "../shared/unknown-values.js";
/**
 * The pieces of a JSON-RPC 2.0 connection every dialect (Ask, Codex app-server, ACP) frames the
 * same way, whatever it then does with a message: the shape checks json-rpc-2.0 does not make,
 * parsing one text message, writing with or without the `"jsonrpc"` member, a reverse request a
 * signal can cancel, and the call gate each client request runs through.
 */

/** Wraps each call of a connection (in-flight limit, metrics, drain): runs `call`, or rejects with the error to answer instead. */
/** Wraps one call of a connection; `notification`: the call has no id, so nothing is answered. */
export type CallGate = (method: string, call: () => Promise<unknown>, notification?: boolean, request?: CallRequest) => Promise<unknown>;

/** What a gate may read of the request besides its method (e.g. the trace context the client sent). */
export interface CallRequest {
  params?: Record<string, unknown>;
  /** The envelope's `trace` member as sent (Codex's W3C trace context), unchecked. */
  trace?: unknown;
}

/** The gate of a connection given none: run the call. */
export const runCall: CallGate = (_method, call) => call();

/** A usable request id (null is not: it names no request the client can match). */
export const isId = (v: unknown): v is string | number => typeof v === "string" || Number.isSafeInteger(v);

/** `omit` for app-server peers that never send or expect `"jsonrpc":"2.0"`. */
export type JsonRpcMember = "include" | "omit";

/** Serializes a message with or without the `"jsonrpc"` member. */
export function serializer(member: JsonRpcMember): (message: object) => string {
  if (member === "include") return (message) => JSON.stringify(message);
  return (message) => {
    const { jsonrpc: _omitted, ...rest } = message as Record<string, unknown>;
    return JSON.stringify(rest);
  };
}

/** One incoming text message as `parseMessage` reads it. */
export type ParsedMessage = { value: unknown } | { parseError: string } | { refused: string; limit: number; id?: string | number } | undefined;

/**
 * One incoming text message, parsed; `undefined` for blank text (a keep-alive line), the parse
 * error's message, or the bound (json-bounds.ts) its shape passes, found before parsing, with the
 * message's id when one can be read without parsing it (so the refusal answers that request).
 * A message the inspector parsed as it arrived (`parseMessageAndHandOver`) is not parsed again.
 * `bounds`: what a peer may send, unless the text is the gateway's own (OWN_JSON_BOUNDS).
 */
export function parseMessage(text: string, bounds: JsonBounds = JSON_BOUNDS): ParsedMessage {
  if (handedOver !== undefined && handedOver.text === text) {
    const { parsed } = handedOver;
    handedOver = undefined;
    return parsed;
  }
  if (text.trim() === "") return undefined;
  const refused = jsonBoundsError(text, bounds);
  if (refused) {
    const id = topLevelId(text);
    return { refused: refusalMessage(refused), limit: refused.limit, ...(id !== undefined ? { id } : {}) };
  }
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { parseError: `Parse error: ${(err as Error).message}` };
  }
}

/** The error message of a message refused for its shape, on every transport (the error's data carries the limit). */
export const refusalMessage = (refused: JsonBoundsError): string => `Invalid Request: a message ${refused.message} was refused`;

/**
 * The last message parsed by `parseMessageAndHandOver`, for the connection that parses the same
 * text next: a frame tap sees a client's message before its connection does, in the same turn
 * (the socket or stream records it, then hands it on). Held until that connection takes it, or
 * at most to the end of the turn's microtasks: never more than one message.
 */
let handedOver: { text: string; parsed: ParsedMessage } | undefined;
/** Whether the microtask that drops what is still handed over is queued (one per turn, holding nothing itself). */
let dropQueued = false;

const dropHandedOver = () => {
  handedOver = undefined;
  dropQueued = false;
};

/**
 * `parseMessage`, for the inspector's trace of a client's message: the result is kept for the
 * connection the message goes to next, so each frame is parsed once. The value is shared: neither
 * may change it.
 */
export function parseMessageAndHandOver(text: string): ParsedMessage {
  const parsed = parseMessage(text);
  handedOver = { text, parsed };
  if (!dropQueued) {
    dropQueued = true;
    queueMicrotask(dropHandedOver);
  }
  return parsed;
}

/**
 * A request of ours to the client, sent by `send` unless `signal` has already aborted: resolves
 * with its result, rejects with its error, or with "cancelled" when `signal` aborts (the client's
 * late answer is then ignored). `abandoned` is told when that abort leaves a sent request unanswered.
 */
export function cancellableRequest(signal: AbortSignal | undefined, send: () => PromiseLike<unknown>, abandoned?: () => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("cancelled"));
    const onAbort = () => {
      reject(new Error("cancelled"));
      abandoned?.();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    send().then(
      (value) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal?.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
