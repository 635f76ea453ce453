import { createJSONRPCErrorResponse, createJSONRPCSuccessResponse, JSONRPCClient, JSONRPCErrorException, type JSONRPCID, type JSONRPCResponse } from "json-rpc-2.0";
import { cancellableRequest, isId, parseMessage, serializer, type JsonRpcMember } from "./jsonrpc-envelope.js";
import type { RequestCause } from "../shared/request-cause.js";
import { connectionOrder, WEBSOCKET_TRANSPORT, type OutboundPolicy, type TransportProfile } from "./outbound-policy.js";
import { OutboundSequencer } from "./outbound-sequencer.js";
import { RequestOrder } from "./request-order.js";
import type { OutgoingText } from "./shared-text.js";
import { errorText, isObject } from "../shared/unknown-values.js";

/**
 * One JSON-RPC 2.0 connection of a JSON-RPC dialect (Ask, Codex app-server, ACP), whatever carries its
 * text (WebSocket, stdio, HTTP): it checks each message of the client once (the optional
 * `"jsonrpc"` member, ids, by-name params, batches element by element) and runs a request's method
 * straight from there, answering with json-rpc-2.0's response shapes; json-rpc-2.0's client sends
 * the server's own requests on the same connection and takes their answers. This layer only
 * frames: what a method does, and which error a failure becomes, is the dialect's.
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
  /**
   * Aborts when nobody waits for the answer any more: the connection closed, or the client
   * cancelled the request (`cancelMethod`). The answer is still written if the connection is open.
   */
  readonly signal: AbortSignal;
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
  /**
   * The client's notification that it no longer needs the answer to one of its requests, naming
   * it in `params.requestId` (ACP `$/cancel_request`, MCP `notifications/cancelled`): that
   * request's `hooks.signal` aborts. The notification still reaches the dialect.
   */
  cancelMethod?: string;
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

/**
 * The cause handed along with a message that runs no method (an answer to one of our requests):
 * it causes nothing, and a sequencer takes a cause it did not make as none.
 */
const NO_CAUSE = Object.freeze({}) as RequestCause;

/** Why a request's signal aborts. */
const CLOSED = "connection closed";
const CANCELLED = "cancelled by the client";

/**
 * One connection. `transmit` writes one message: a string of the connection's own, or a
 * `SharedText` the same for several connections (a transport that writes bytes can send its
 * `bytes` as they are).
 */
export class JsonRpcConnection {
  private isClosed = false;
  private readonly serialize: (message: object) => string;
  /** The only writer of the connection: responses, notifications and requests to the client alike. */
  private readonly outbound: OutboundSequencer<OutgoingText>;
  private readonly order: RequestOrder | undefined;
  private readonly client: JSONRPCClient<RequestCause | undefined>;
  private readonly isMethod: (method: string) => boolean;
  private nextId: number;
  /** The abort of every client request (and notification) being run, aborted on close. */
  private readonly running = new Set<AbortController>();
  /** The same, of the client's requests by id (as JSON), for `cancelMethod`. */
  private readonly runningById = new Map<string, AbortController>();

  constructor(
    transmit: (message: OutgoingText) => void,
    private readonly options: JsonRpcConnectionOptions,
  ) {
    this.serialize = serializer(options.jsonrpcMember);
    const transmitOpen = (text: OutgoingText) => {
      if (!this.isClosed) transmit(text);
    };
    this.outbound = new OutboundSequencer<OutgoingText>(transmitOpen, connectionOrder(options.outbound, options.transport ?? WEBSOCKET_TRANSPORT));
    this.order = options.ordered ? new RequestOrder() : undefined;
    this.nextId = options.firstRequestId;
    // The dialect's table, shared by its connections (a set per connection would cost each idle one).
    this.isMethod = options.isMethod ?? methodSet(options.methods);
    // A request to the client is written like a notification, with its cause (the client params).
    this.client = new JSONRPCClient<RequestCause | undefined>((payload: object, causedBy) => this.send(payload, causedBy), () => this.nextId++);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Handles one incoming text message (a request, notification, response or batch). */
  async receive(text: string): Promise<void> {
    if (this.isClosed) return;
    const parsed = parseMessage(text);
    if (parsed === undefined) return;
    if ("parseError" in parsed) return this.outbound.reserve().fill(this.textOf(this.unidentifiable("parse_error", parsed.parseError)));
    if ("refused" in parsed) {
      const data = { limit: parsed.limit };
      return this.outbound
        .reserve()
        .fill(this.textOf(parsed.id !== undefined ? this.error(parsed.id, "invalid_request", parsed.refused, data) : this.unidentifiable("invalid_request", parsed.refused, data)));
    }
    const { value } = parsed;
    if (isObject(value) && !("method" in value) && value.id !== undefined && ("result" in value || "error" in value)) {
      // An answer to one of our requests takes no place in either order: it is handed to the
      // waiting call at once. Only a malformed one is answered.
      const refusal = await this.handleOne(value, { cause: NO_CAUSE });
      return refusal ? this.outbound.reserve().fill(this.textOf(refusal)) : undefined;
    }
    // The answer's place is taken now, on arrival (the policy says whether later ones wait for it).
    const slot = this.outbound.reserve();
    await slot.fill(this.textOf(await this.answer(value, { cause: slot.cause })));
  }

  /**
   * A message longer than the transport's bound was skipped unread: it is answered as an
   * unidentifiable message (its id is unknown, so with id null) or dropped, as the dialect wants.
   */
  skipOversized(maxBytes: number): void {
    if (this.isClosed) return;
    const refusal = this.unidentifiable("invalid_request", `Invalid Request: a message of more than ${maxBytes} bytes was skipped (the gateway's limit)`, {
      limit: maxBytes,
    });
    if (refusal) void this.outbound.reserve().fill(this.textOf(refusal));
  }

  /**
   * Writes a message (serialized with or without `"jsonrpc"`, as configured), as one caused by
   * `causedBy` when given (see RequestCause).
   */
  readonly send = (message: object, causedBy?: RequestCause): void => this.sendText(this.textOf(message)!, causedBy);

  /** Writes text already serialized the way `send` would, in its place as `send` would. */
  readonly sendText = (text: OutgoingText, causedBy?: RequestCause): void => this.outbound.send(text, causedBy);

  /**
   * A request of the server, with the next id, caused by `causedBy` when given; `answer` resolves
   * with the client's result and rejects with its error, or when `signal` aborts.
   */
  request(method: string, params: object, signal?: AbortSignal, causedBy?: RequestCause): { id: number; answer: Promise<unknown> } {
    const id = this.nextId++;
    const { cancelNotice } = this.options;
    // Its id known to the caller (`rpc.request` would number it out of sight); answered as `rpc.request` answers.
    const answer = cancellableRequest(
      signal,
      () =>
        this.client.requestAdvanced({ jsonrpc: "2.0", id, method, params: params as Record<string, unknown> }, causedBy).then((response) => {
          if ("error" in response && response.error) throw new JSONRPCErrorException(response.error.message, response.error.code, response.error.data);
          return (response as { result?: unknown }).result;
        }),
      cancelNotice &&
        (() => {
          // After the request it withdraws, wherever that request waits.
          if (!this.isClosed) this.send({ jsonrpc: "2.0", ...cancelNotice(id) }, causedBy);
        }),
    );
    return { id, answer };
  }

  close(): void {
    if (this.isClosed) return;
    // What is ready goes out while the transport may still take it; the rest is dropped.
    this.outbound.close();
    this.isClosed = true;
    // Nobody waits for an answer any more: the methods still running are told.
    for (const controller of this.running) controller.abort(new Error(CLOSED));
    this.options.onClose?.();
    this.client.rejectAllPendingRequests(CLOSED);
  }

  private textOf(message: object | object[] | null): string | undefined {
    return message === null ? undefined : Array.isArray(message) ? `[${message.map(this.serialize).join(",")}]` : this.serialize(message);
  }

  private error(id: JSONRPCID, name: keyof FramingErrorCodes, message: string, data?: object): JSONRPCResponse {
    return createJSONRPCErrorResponse(id, this.options.codes[name], message, data);
  }

  /** The answer to a message that names no usable id, or nothing when the dialect drops such messages. */
  private unidentifiable(name: keyof FramingErrorCodes, message: string, data?: object): JSONRPCResponse | null {
    if (this.options.answerUnidentifiable) return this.error(null, name, message, data);
    this.options.onDropped?.(message);
    return null;
  }

  /** The client cancelled one of its requests: the method running it is told through its signal. */
  private cancelled(params: unknown): void {
    if (isObject(params) && isId(params.requestId)) this.runningById.get(JSON.stringify(params.requestId))?.abort(new Error(CANCELLED));
  }

  /**
   * Runs one request (`id` given, null included) or notification of a method served, with a signal
   * of its own, aborted on close or when the client cancels it; resolves with its answer (a
   * notification's: none, whatever it did).
   */
  private async run(
    method: string,
    params: Record<string, unknown> | undefined,
    id: JSONRPCID | undefined,
    hooks: Omit<CallHooks, "signal">,
  ): Promise<JSONRPCResponse | null> {
    const controller = new AbortController();
    const key = id === undefined ? undefined : JSON.stringify(id);
    this.running.add(controller);
    if (key !== undefined) this.runningById.set(key, controller);
    try {
      const result = await this.options.call(method, params, { ...hooks, signal: controller.signal });
      return id === undefined ? null : createJSONRPCSuccessResponse(id, result);
    } catch (error) {
      // Error answers are the protocol working, not faults: the dialect logs internal errors itself.
      if (id === undefined) return null;
      const { code, message, data } = this.options.errorOf(error);
      return createJSONRPCErrorResponse(id, code, message, data);
    } finally {
      this.running.delete(controller);
      if (key !== undefined && this.runningById.get(key) === controller) this.runningById.delete(key);
    }
  }

  /**
   * One message of a batch or a lone message; resolves with the response to send, if any. A call
   * takes its place in the connection's order before this returns its promise (no await before it),
   * so the elements of a batch, mapped in a row, are applied in array order.
   */
  private async handleOne(message: unknown, hooks: Pick<CallHooks, "cause">): Promise<JSONRPCResponse | null> {
    if (!isObject(message)) return this.unidentifiable("invalid_request", "Invalid Request: a JSON-RPC message must be an object");
    const hasId = "id" in message && message.id !== undefined;
    const nullIdRequest = this.options.nullRequestIds === true && message.id === null && typeof message.method === "string";
    if (hasId && !isId(message.id) && !nullIdRequest) {
      // Where the dialect's ids cannot be null, a null id names no request the client could match
      // an answer to, and an answer echoing it would not be a valid response: it is refused like
      // any other unusable id.
      return this.unidentifiable("invalid_request", message.id === null ? "Invalid Request: id must not be null" : "Invalid Request: id must be a string or an integer");
    }
    const id = hasId && isId(message.id) ? message.id : null;
    // A broken message without an id cannot be matched to anything either: refused like one with an unusable id.
    const refuse = (name: keyof FramingErrorCodes, text: string) => (hasId ? this.error(id, name, text) : this.unidentifiable(name, text));
    if (this.options.jsonrpcRequired && message.jsonrpc !== "2.0") return refuse("invalid_request", 'Invalid Request: "jsonrpc" must be "2.0"');
    if ("jsonrpc" in message && message.jsonrpc !== "2.0") return refuse("invalid_request", 'Invalid Request: "jsonrpc" must be "2.0" when present');
    if (!("method" in message)) {
      if (hasId && ("result" in message || "error" in message)) {
        // An answer to one of our requests.
        this.client.receive({ ...message, jsonrpc: "2.0" } as unknown as JSONRPCResponse);
        return null;
      }
      return refuse("invalid_request", "Invalid Request: Method not specified");
    }
    if (typeof message.method !== "string") return refuse("invalid_request", "Invalid Request: method must be a string");
    if (!hasId && message.method === this.options.cancelMethod) this.cancelled(message.params);
    if (!hasId && this.options.onNotification) {
      this.options.onNotification(message.method, message.params);
      return null;
    }
    const nullParams = this.options.nullParams ?? "invalid";
    const paramsAbsent = message.params === undefined || (nullParams !== "invalid" && message.params === null);
    if ("params" in message && !paramsAbsent && !isObject(message.params)) {
      return hasId ? this.error(id, "invalid_params", "invalid params: params must be an object") : null;
    }
    const params = (nullParams === "absent" ? (message.params ?? undefined) : message.params) as Record<string, unknown> | undefined;
    if (!this.isMethod(message.method)) {
      if (!hasId) return null;
      const failure = this.options.unknownMethodFailure?.(message.method);
      if (failure === undefined) return this.error(id, "method_not_found", `Method not found: ${message.method}`);
      const { code, message: text, data } = this.options.errorOf(failure);
      return createJSONRPCErrorResponse(id, code, text, data);
    }
    const trace = message.trace;
    const requestId = hasId ? id! : undefined;
    const { order } = this;
    if (!order) return this.run(message.method, params, requestId, { ...hooks, notification: !hasId, trace, inOrder: (call) => call() });
    const turn = order.enter();
    try {
      return await this.run(message.method, params, requestId, { ...hooks, notification: !hasId, trace, inOrder: (call) => turn.run(call) });
    } finally {
      // A call its gates refused never ran; its place must not hold up the requests after it.
      turn.release();
    }
  }

  /** The answer to one text message: a response, a batch of responses, or nothing. */
  private async answer(value: unknown, hooks: Pick<CallHooks, "cause">): Promise<JSONRPCResponse | JSONRPCResponse[] | null> {
    if (!Array.isArray(value)) return this.handleOne(value, hooks);
    const batches = this.options.batches;
    if (batches === false) return this.unidentifiable("invalid_request", "Invalid Request: batches are not supported");
    if (value.length === 0) return this.error(null, "invalid_request", "Invalid Request: empty batch");
    if (value.length > batches.max) return this.error(null, "invalid_request", `Invalid Request: batch of ${value.length} exceeds the limit of ${batches.max}`);
    const responses = (await Promise.all(value.map((message) => this.handleOne(message, hooks)))).filter((r): r is JSONRPCResponse => r !== null);
    return responses.length ? responses : null;
  }
}

/** Whether a method is among `methods` (one set per table, kept for every connection given the same array). */
function methodSet(methods: readonly string[]): (method: string) => boolean {
  let set = METHOD_SETS.get(methods);
  if (!set) METHOD_SETS.set(methods, (set = new Set(methods)));
  return (method) => set.has(method);
}
const METHOD_SETS = new WeakMap<readonly string[], ReadonlySet<string>>();
