import {
  createJSONRPCErrorResponse,
  createJSONRPCSuccessResponse,
  JSONRPCClient,
  JSONRPCErrorException,
  JSONRPCServer,
  JSONRPCServerAndClient,
  type JSONRPCID,
  type JSONRPCMethod,
  type JSONRPCResponse,
} from "json-rpc-2.0";
import { cancellableRequest, isId, parseMessage, serializer, type JsonRpcMember } from "./jsonrpc-envelope.js";
import type { RequestCause } from "../shared/request-cause.js";
import { connectionOrder, WEBSOCKET_TRANSPORT, type OutboundPolicy, type TransportProfile } from "./outbound-policy.js";
import { OutboundSequencer } from "./outbound-sequencer.js";
import { RequestOrder } from "./request-order.js";
import type { OutgoingText } from "./shared-text.js";
import { errorText, isObject } from "../shared/unknown-values.js";

/**
 * One JSON-RPC 2.0 connection of a JSON-RPC dialect (Ask, Codex app-server, ACP), whatever carries its
 * text (WebSocket, stdio, HTTP): json-rpc-2.0's server answers the client's requests and its client
 * sends the server's own requests on the same connection. This layer only frames: the envelope
 * checks the library does not make (the optional `"jsonrpc"` member, ids, by-name params,
 * batches element by element) and answers to the server's requests. What a method does, and which
 * error a failure becomes, is the dialect's.
 */

/** The JSON-RPC error codes a framing error is answered with (the dialect's registry names them). */
export interface FramingErrorCodes {
  parse_error: number;
  invalid_request: number;
  method_not_found: number;
  invalid_params: number;
  internal_error: number;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** An error class whose instances are answered with their own code, message and data. */
export type DialectErrorClass = abstract new (...args: never[]) => { code: number; message: string; data?: unknown };

/** The error a failure is answered with: a dialect error as it is, anything else `internalErrorCode` with its message. */
export function answeredError(error: unknown, dialectErrors: readonly DialectErrorClass[], internalErrorCode: number): JsonRpcError {
  if (dialectErrors.some((errorClass) => error instanceof errorClass)) {
    const { code, message, data } = error as InstanceType<DialectErrorClass>;
    return { code, message, ...(data === undefined ? {} : { data }) };
  }
  return { code: internalErrorCode, message: `Internal error: ${errorText(error)}` };
}

/** What a method gets from the connection besides its params. */
export interface CallHooks {
  /** The request, as the cause of the notifications and requests to the client it brings about. */
  readonly cause: RequestCause;
  /** Runs `call` at the request's place in the connection's order (at once when the dialect keeps none). */
  inOrder<T>(call: () => Promise<T>): Promise<T>;
  /** The call is a notification: it runs, and nothing is answered. */
  readonly notification: boolean;
  /** The request envelope's `trace` member as sent (Codex puts a W3C trace context there), unchecked. */
  readonly trace?: unknown;
}

export interface JsonRpcConnectionOptions {
  jsonrpcMember: JsonRpcMember;
  /** The client must send `"jsonrpc":"2.0"` on every message (ACP); otherwise the member is optional. */
  jsonrpcRequired?: boolean;
  /**
   * A request (a message with a method) may have a null id, answered with that null id (ACP: its
   * RequestId includes null, and the SDK's agent answers such requests). Otherwise a null id is
   * refused like any other unusable id.
   */
  nullRequestIds?: boolean;
  /** `"params": null`: answered invalid_params (default), taken as no params (Ask), or passed on as it is (ACP). */
  nullParams?: "invalid" | "absent" | "passed";
  /**
   * Requests are applied one after another in arrival order (request-order.ts: a method runs its
   * work through `hooks.inOrder`); an answer to one of our requests is taken at once.
   */
  ordered?: boolean;
  /** How the connection orders what it writes (outbound-sequencer.ts). */
  outbound: OutboundPolicy;
  /** What the wire contributes to that order (default: a WebSocket's). */
  transport?: TransportProfile;
  /** Whether a method is served (default: it is in `methods`); any other is answered method_not_found. */
  isMethod?(method: string): boolean;
  /**
   * The failure a request of a method not served is answered with instead of method_not_found
   * (through `errorOf`), or undefined for method_not_found (ACP: before initialize, every request
   * is refused alike, known or not).
   */
  unknownMethodFailure?(method: string): unknown;
  /**
   * The notification that tells the client a request of ours it has not answered is no longer
   * needed (ACP: `$/cancel_request`), sent when the request's signal aborts; the client still
   * answers it. Without it the client is told nothing, and its late answer is ignored.
   */
  cancelNotice?(id: number): { method: string; params: object };
  /** Called on close, after nothing more can be written and before our pending requests are rejected. */
  onClose?(): void;
  /**
   * Takes every notification of the client (any method, params unchecked: the dialect ignores what
   * it does not know) instead of the method table.
   */
  onNotification?(method: string, params: unknown): void;
  /** The methods the connection serves; any other is answered method_not_found. */
  methods: readonly string[];
  /** Runs one request or notification of the client; resolves with the result, rejects with anything `errorOf` maps. */
  call(method: string, params: Record<string, unknown> | undefined, hooks: CallHooks): Promise<unknown>;
  /** The error a method's failure is answered with. */
  errorOf(error: unknown): JsonRpcError;
  codes: FramingErrorCodes;
  /** Largest batch accepted (element count); `false`: a batch is not a message of the dialect. */
  batches: { max: number } | false;
  /**
   * A message whose sender cannot be told which message failed (not JSON, not an object, a null or
   * malformed id, a batch where none is allowed, a broken envelope without an id): answered with
   * id null, as JSON-RPC says, or dropped, as Codex does (its clients disconnect on a response
   * they cannot match).
   */
  answerUnidentifiable: boolean;
  /** Ids of the server's own requests count up from here. */
  firstRequestId: number;
  /** Told about every message dropped without an answer. */
  onDropped?(reason: string): void;
}

export interface JsonRpcConnection {
  /** Handles one incoming text message (a request, notification, response or batch). */
  receive(text: string): Promise<void>;
  /**
   * A message longer than the transport's bound was skipped unread: it is answered as an
   * unidentifiable message (its id is unknown, so with id null) or dropped, as the dialect wants.
   */
  skipOversized(maxBytes: number): void;
  /**
   * Writes a message (serialized with or without `"jsonrpc"`, as configured), as one caused by
   * `causedBy` when given (see RequestCause).
   */
  send(message: object, causedBy?: RequestCause): void;
  /** Writes text already serialized the way `send` would, in its place as `send` would. */
  sendText(text: OutgoingText, causedBy?: RequestCause): void;
  /**
   * A request of the server, with the next id, caused by `causedBy` when given; `answer` resolves
   * with the client's result and rejects with its error, or when `signal` aborts.
   */
  request(method: string, params: object, signal?: AbortSignal, causedBy?: RequestCause): { id: number; answer: Promise<unknown> };
  readonly closed: boolean;
  close(): void;
}

/**
 * The cause handed along with a message that runs no method (an answer to one of our requests):
 * it causes nothing, and a sequencer takes a cause it did not make as none.
 */
const NO_CAUSE = Object.freeze({}) as RequestCause;

/**
 * `transmit` writes one message: a string of the connection's own, or a `SharedText` the same for
 * several connections (a transport that writes bytes can send its `bytes` as they are).
 */
export function jsonRpcConnection(transmit: (message: OutgoingText) => void, options: JsonRpcConnectionOptions): JsonRpcConnection {
  let closed = false;
  const serialize = serializer(options.jsonrpcMember);
  const transmitOpen = (text: OutgoingText) => {
    if (!closed) transmit(text);
  };
  // The only writer of the connection: responses, notifications and requests to the client alike.
  const outbound = new OutboundSequencer<OutgoingText>(transmitOpen, connectionOrder(options.outbound, options.transport ?? WEBSOCKET_TRANSPORT));
  const order = options.ordered ? new RequestOrder() : undefined;
  const writeText = (text: OutgoingText, causedBy?: RequestCause) => outbound.send(text, causedBy);
  const reserve = () => outbound.reserve();
  const textOf = (message: object | object[] | null): string | undefined =>
    message === null ? undefined : Array.isArray(message) ? `[${message.map(serialize).join(",")}]` : serialize(message);
  const send = (message: object, causedBy?: RequestCause) => writeText(textOf(message)!, causedBy);
  const isMethod = options.isMethod ?? ((method: string) => server.hasMethod(method));

  let nextId = options.firstRequestId;
  // Error answers are the protocol working, not faults: the dialect logs internal errors itself, and
  // the library's default (console.warn) would write onto stderr for every refusal.
  const server = new JSONRPCServer<CallHooks>({ errorListener: () => undefined });
  // A request to the client is written like a notification, with its cause (the client params).
  const client = new JSONRPCClient<RequestCause | undefined>((payload: object, causedBy) => send(payload, causedBy), () => nextId++);
  const rpc = new JSONRPCServerAndClient<CallHooks, RequestCause | undefined>(server, client);
  // One method serves every name, answering as `addMethod`'s would: `addMethod` makes a function per
  // method and connection, which took kilobytes per idle connection with a dialect's dozens of methods.
  const runMethod: JSONRPCMethod<CallHooks> = (request, hooks) =>
    Promise.resolve(options.call(request.method, request.params as Record<string, unknown> | undefined, hooks)).then((result) =>
      request.id === undefined ? null : createJSONRPCSuccessResponse(request.id, result),
    );
  for (const method of options.methods) rpc.addMethodAdvanced(method, runMethod);
  server.mapErrorToJSONRPCErrorResponse = (id: JSONRPCID, error: unknown) => {
    const { code, message, data } = options.errorOf(error);
    return createJSONRPCErrorResponse(id, code, message, data);
  };

  const error = (id: JSONRPCID, name: keyof FramingErrorCodes, message: string, data?: object): JSONRPCResponse =>
    createJSONRPCErrorResponse(id, options.codes[name], message, data);
  /** The answer to a message that names no usable id, or nothing when the dialect drops such messages. */
  const unidentifiable = (name: keyof FramingErrorCodes, message: string, data?: object): JSONRPCResponse | null => {
    if (options.answerUnidentifiable) return error(null, name, message, data);
    options.onDropped?.(message);
    return null;
  };

  /**
   * One message of a batch or a lone message; resolves with the response to send, if any. A call
   * takes its place in the connection's order before this returns its promise (no await before it),
   * so the elements of a batch, mapped in a row, are applied in array order.
   */
  async function handleOne(message: unknown, hooks: Pick<CallHooks, "cause">): Promise<JSONRPCResponse | null> {
    if (!isObject(message)) return unidentifiable("invalid_request", "Invalid Request: a JSON-RPC message must be an object");
    const hasId = "id" in message && message.id !== undefined;
    const nullIdRequest = options.nullRequestIds === true && message.id === null && typeof message.method === "string";
    if (hasId && !isId(message.id) && !nullIdRequest) {
      // Where the dialect's ids cannot be null, a null id names no request the client could match
      // an answer to, and an answer echoing it would not be a valid response: it is refused like
      // any other unusable id.
      return unidentifiable("invalid_request", message.id === null ? "Invalid Request: id must not be null" : "Invalid Request: id must be a string or an integer");
    }
    const id = hasId && isId(message.id) ? message.id : null;
    // A broken message without an id cannot be matched to anything either: refused like one with an unusable id.
    const refuse = (name: keyof FramingErrorCodes, text: string) => (hasId ? error(id, name, text) : unidentifiable(name, text));
    if (options.jsonrpcRequired && message.jsonrpc !== "2.0") return refuse("invalid_request", 'Invalid Request: "jsonrpc" must be "2.0"');
    if ("jsonrpc" in message && message.jsonrpc !== "2.0") return refuse("invalid_request", 'Invalid Request: "jsonrpc" must be "2.0" when present');
    if (!("method" in message)) {
      if (hasId && ("result" in message || "error" in message)) {
        // An answer to one of our requests.
        client.receive({ ...message, jsonrpc: "2.0" } as unknown as JSONRPCResponse);
        return null;
      }
      return refuse("invalid_request", "Invalid Request: Method not specified");
    }
    if (typeof message.method !== "string") return refuse("invalid_request", "Invalid Request: method must be a string");
    if (!hasId && options.onNotification) {
      options.onNotification(message.method, message.params);
      return null;
    }
    const nullParams = options.nullParams ?? "invalid";
    const paramsAbsent = message.params === undefined || (nullParams !== "invalid" && message.params === null);
    if ("params" in message && !paramsAbsent && !isObject(message.params)) {
      return hasId ? error(id, "invalid_params", "invalid params: params must be an object") : null;
    }
    const params = nullParams === "absent" ? (message.params ?? undefined) : message.params;
    const request = { jsonrpc: "2.0" as const, method: message.method, params: params as Record<string, unknown> | undefined, ...(hasId ? { id: id! } : {}) };
    if (!isMethod(message.method)) {
      if (!hasId) return null;
      const failure = options.unknownMethodFailure?.(message.method);
      if (failure === undefined) return error(id, "method_not_found", `Method not found: ${message.method}`);
      const { code, message: text, data } = options.errorOf(failure);
      return createJSONRPCErrorResponse(id, code, text, data);
    }
    const trace = message.trace;
    if (!order) return server.receive(request, { ...hooks, notification: !hasId, trace, inOrder: (call) => call() });
    const turn = order.enter();
    try {
      return await server.receive(request, { ...hooks, notification: !hasId, trace, inOrder: (call) => turn.run(call) });
    } finally {
      // A call its gates refused never ran; its place must not hold up the requests after it.
      turn.release();
    }
  }

  /** The answer to one text message: a response, a batch of responses, or nothing. */
  async function answer(value: unknown, hooks: Pick<CallHooks, "cause">): Promise<JSONRPCResponse | JSONRPCResponse[] | null> {
    if (!Array.isArray(value)) return handleOne(value, hooks);
    const batches = options.batches;
    if (batches === false) return unidentifiable("invalid_request", "Invalid Request: batches are not supported");
    if (value.length === 0) return error(null, "invalid_request", "Invalid Request: empty batch");
    if (value.length > batches.max) return error(null, "invalid_request", `Invalid Request: batch of ${value.length} exceeds the limit of ${batches.max}`);
    const responses = (await Promise.all(value.map((message) => handleOne(message, hooks)))).filter((r): r is JSONRPCResponse => r !== null);
    return responses.length ? responses : null;
  }

  return {
    async receive(text: string) {
      if (closed) return;
      const parsed = parseMessage(text);
      if (parsed === undefined) return;
      if ("parseError" in parsed) return reserve().fill(textOf(unidentifiable("parse_error", parsed.parseError)));
      if ("refused" in parsed) {
        const data = { limit: parsed.limit };
        return reserve().fill(textOf(parsed.id !== undefined ? error(parsed.id, "invalid_request", parsed.refused, data) : unidentifiable("invalid_request", parsed.refused, data)));
      }
      const { value } = parsed;
      if (isObject(value) && !("method" in value) && value.id !== undefined && ("result" in value || "error" in value)) {
        // An answer to one of our requests takes no place in either order: it is handed to the
        // waiting call at once. Only a malformed one is answered.
        const refusal = await handleOne(value, { cause: NO_CAUSE });
        return refusal ? reserve().fill(textOf(refusal)) : undefined;
      }
      // The answer's place is taken now, on arrival (the policy says whether later ones wait for it).
      const slot = reserve();
      await slot.fill(textOf(await answer(value, { cause: slot.cause })));
    },
    skipOversized(maxBytes) {
      if (closed) return;
      const refusal = unidentifiable("invalid_request", `Invalid Request: a message of more than ${maxBytes} bytes was skipped (the gateway's limit)`, {
        limit: maxBytes,
      });
      if (refusal) void reserve().fill(textOf(refusal));
    },
    send,
    sendText: writeText,
    request(method, params, signal, causedBy) {
      const id = nextId++;
      // Its id known to the caller (`rpc.request` would number it out of sight); answered as `rpc.request` answers.
      const answer = cancellableRequest(signal, () =>
        rpc.requestAdvanced({ jsonrpc: "2.0", id, method, params: params as Record<string, unknown> }, causedBy).then((response) => {
          if ("error" in response && response.error) throw new JSONRPCErrorException(response.error.message, response.error.code, response.error.data);
          return (response as { result?: unknown }).result;
        }),
        options.cancelNotice &&
          (() => {
            // After the request it withdraws, wherever that request waits.
            if (!closed) send({ jsonrpc: "2.0", ...options.cancelNotice!(id) }, causedBy);
          }),
      );
      return { id, answer };
    },
    get closed() {
      return closed;
    },
    close() {
      if (closed) return;
      // What is ready goes out while the transport may still take it; the rest is dropped.
      outbound.close();
      closed = true;
      options.onClose?.();
      client.rejectAllPendingRequests("connection closed");
    },
  };
}
