import {
  createJSONRPCErrorResponse,
  JSONRPCClient,
  JSONRPCErrorException,
  JSONRPCServer,
  JSONRPCServerAndClient,
  type JSONRPCID,
  type JSONRPCResponse,
} from "json-rpc-2.0";
import { cancellableRequest, isId, isObject, parseMessage, serializer, type JsonRpcMember } from "./jsonrpc-envelope.js";

/**
 * One JSON-RPC 2.0 connection of a JSON-RPC dialect (Codex app-server, ACP), whatever carries its
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
  return { code: internalErrorCode, message: `Internal error: ${error instanceof Error ? error.message : String(error)}` };
}

/** Lets a method have something happen once its response has been written (or dropped, for a notification). */
export interface CallHooks {
  afterResponse(action: () => void): void;
}

export interface JsonRpcConnectionOptions {
  jsonrpcMember: JsonRpcMember;
  /** The client must send `"jsonrpc":"2.0"` on every message (ACP); otherwise the member is optional. */
  jsonrpcRequired?: boolean;
  /** `"params": null` is passed on as it is (ACP) rather than answered invalid_params. */
  nullParamsAccepted?: boolean;
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
   * malformed id, a batch where none is allowed): answered with id null, as JSON-RPC says, or
   * dropped, as Codex does (its clients disconnect on a response they cannot match).
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
  /** Writes a message (serialized with or without `"jsonrpc"`, as configured). */
  send(message: object): void;
  /** Writes text already serialized the way `send` would. */
  sendText(text: string): void;
  /**
   * A request of the server, with the next id (or `id`, for a caller that numbers its requests
   * itself); `answer` resolves with the client's result and rejects with its error, or when
   * `signal` aborts.
   */
  request(method: string, params: object, signal?: AbortSignal, id?: number): { id: number; answer: Promise<unknown> };
  readonly closed: boolean;
  close(): void;
}


export function jsonRpcConnection(sendText: (text: string) => void, options: JsonRpcConnectionOptions): JsonRpcConnection {
  let closed = false;
  const serialize = serializer(options.jsonrpcMember);
  const writeText = (text: string) => {
    if (!closed) sendText(text);
  };
  const send = (message: object | object[]) => writeText(Array.isArray(message) ? `[${message.map(serialize).join(",")}]` : serialize(message));

  let nextId = options.firstRequestId;
  // Error answers are the protocol working, not faults: the dialect logs internal errors itself, and
  // the library's default (console.warn) would write onto stderr for every refusal.
  const server = new JSONRPCServer<CallHooks>({ errorListener: () => undefined });
  const client = new JSONRPCClient<void>((payload: object) => send(payload), () => nextId++);
  const rpc = new JSONRPCServerAndClient<CallHooks, void>(server, client);
  for (const method of options.methods) rpc.addMethod(method, (params, hooks) => options.call(method, params as Record<string, unknown> | undefined, hooks));
  server.mapErrorToJSONRPCErrorResponse = (id: JSONRPCID, error: unknown) => {
    const { code, message, data } = options.errorOf(error);
    return createJSONRPCErrorResponse(id, code, message, data);
  };

  const error = (id: JSONRPCID, name: keyof FramingErrorCodes, message: string): JSONRPCResponse =>
    createJSONRPCErrorResponse(id, options.codes[name], message);
  /** The answer to a message that names no usable id, or nothing when the dialect drops such messages. */
  const unidentifiable = (name: keyof FramingErrorCodes, message: string): JSONRPCResponse | null => {
    if (options.answerUnidentifiable) return error(null, name, message);
    options.onDropped?.(message);
    return null;
  };

  /** One message of a batch or a lone message; resolves with the response to send, if any. */
  async function handleOne(message: unknown, hooks: CallHooks): Promise<JSONRPCResponse | null> {
    if (!isObject(message)) return unidentifiable("invalid_request", "Invalid Request: a JSON-RPC message must be an object");
    const hasId = "id" in message && message.id !== undefined;
    if (hasId && !isId(message.id)) {
      if (message.id !== null) return unidentifiable("invalid_request", "Invalid Request: id must be a string or an integer");
      if (!options.answerUnidentifiable) return unidentifiable("invalid_request", "Invalid Request: id must not be null");
    }
    const id = hasId && isId(message.id) ? message.id : null;
    if (options.jsonrpcRequired && message.jsonrpc !== "2.0") return error(id, "invalid_request", 'Invalid Request: "jsonrpc" must be "2.0"');
    if ("jsonrpc" in message && message.jsonrpc !== "2.0") return error(id, "invalid_request", 'Invalid Request: "jsonrpc" must be "2.0" when present');
    if (!("method" in message)) {
      if (hasId && ("result" in message || "error" in message)) {
        // An answer to one of our requests.
        client.receive({ ...message, jsonrpc: "2.0" } as unknown as JSONRPCResponse);
        return null;
      }
      return error(id, "invalid_request", "Invalid Request: Method not specified");
    }
    if (typeof message.method !== "string") return error(id, "invalid_request", "Invalid Request: method must be a string");
    if (!hasId && options.onNotification) {
      options.onNotification(message.method, message.params);
      return null;
    }
    const paramsAbsent = message.params === undefined || (options.nullParamsAccepted && message.params === null);
    if ("params" in message && !paramsAbsent && !isObject(message.params)) {
      return hasId ? error(id, "invalid_params", "invalid params: params must be an object") : null;
    }
    if (!server.hasMethod(message.method)) {
      return hasId ? error(id, "method_not_found", `Method not found: ${message.method}`) : null;
    }
    const request = { jsonrpc: "2.0" as const, method: message.method, params: message.params as Record<string, unknown> | undefined, ...(hasId ? { id: id! } : {}) };
    return server.receive(request, hooks);
  }

  /** Hooks of one incoming message: run once its response (if any) has been written. */
  function callHooks(): CallHooks & { run(): void } {
    const actions: Array<() => void> = [];
    return {
      afterResponse: (action) => void actions.push(action),
      run: () => {
        for (const action of actions.splice(0)) action();
      },
    };
  }

  return {
    async receive(text: string) {
      if (closed) return;
      const parsed = parseMessage(text);
      if (parsed === undefined) return;
      if ("parseError" in parsed) {
        const response = unidentifiable("parse_error", parsed.parseError);
        if (response) send(response);
        return;
      }
      const { value } = parsed;
      if (!Array.isArray(value)) {
        const hooks = callHooks();
        const response = await handleOne(value, hooks);
        if (response) send(response);
        hooks.run();
        return;
      }
      const batches = options.batches;
      const refusal =
        batches === false
          ? unidentifiable("invalid_request", "Invalid Request: batches are not supported")
          : value.length === 0
            ? error(null, "invalid_request", "Invalid Request: empty batch")
            : value.length > batches.max
              ? error(null, "invalid_request", `Invalid Request: batch of ${value.length} exceeds the limit of ${batches.max}`)
              : undefined;
      if (refusal !== undefined) {
        if (refusal) send(refusal);
        return;
      }
      const hooks = callHooks();
      const responses = (await Promise.all(value.map((message) => handleOne(message, hooks)))).filter((r): r is JSONRPCResponse => r !== null);
      if (responses.length) send(responses);
      hooks.run();
    },
    send,
    sendText: writeText,
    request(method, params, signal, chosenId) {
      const id = chosenId ?? nextId++;
      // Sent with the chosen id (`rpc.request` would number it itself); answered as `rpc.request` answers.
      const answer = cancellableRequest(signal, () =>
        rpc.requestAdvanced({ jsonrpc: "2.0", id, method, params: params as Record<string, unknown> }, undefined).then((response) => {
          if ("error" in response && response.error) throw new JSONRPCErrorException(response.error.message, response.error.code, response.error.data);
          return (response as { result?: unknown }).result;
        }),
      );
      return { id, answer };
    },
    get closed() {
      return closed;
    },
    close() {
      if (closed) return;
      closed = true;
      client.rejectAllPendingRequests("connection closed");
    },
  };
}
