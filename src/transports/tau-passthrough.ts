import WebSocket from "ws";
import type { ErrorObject } from "../../generated/tau-v18.js";
import { TauCodec, TAU_VERSION } from "../tau/codec.js";
import { corkUntilNextTick } from "../tau/write-batching.js";
import { messageText, openTauSocket, redactUrl, UpstreamVersionError, type OpenTauSocket, type TauSocketHandlers } from "../tau/connection.js";
import type { Log } from "../shared/log.js";
import { OpenRequests } from "../tau/open-requests.js";
import type { TauSessionGate } from "./tau-tenancy.js";
import { secondsSince, type CallObserver } from "./call-observer.js";
import type { TraceCarrier } from "../shared/tracing.js";
import { traceRelayedRequest, type RelayedRequestEnd } from "./tau-relay-spans.js";

/**
 * The `/tau` front door: one client WebSocket relayed to its own upstream Tau connection (Tau ties
 * client tools and observation to a connection, so 1:1 keeps its semantics exact, DESIGN §4.1).
 *
 * Client → upstream: every message is checked with the same codec the host uses; an invalid
 * request is answered here with Tau's own error response and never forwarded, a valid one is
 * recorded in the connection's open-request table (which refuses a duplicate id or one request
 * past the in-flight limit) and forwarded as the client's original text. Upstream → client: every
 * message is read by the codec (responses checked against the result of the method they answer);
 * an invalid one, or a response to no open request, is logged, counted and not relayed. Messages
 * the client sends before the upstream is ready wait, in order.
 */

export interface TauPassthroughOptions {
  upstream: { url: string; token?: string; connectTimeoutMs?: number };
  log?: Log;
  /** Shared, mutable counters (for metrics and health reports). */
  counters?: PassthroughCounters;
  /** Tenant rules (src/transports/tau-tenancy.ts): may answer a request itself, rewrite it, or drop an upstream message. */
  gate?: TauSessionGate;
  /** Client messages accepted while the upstream is still connecting. Default 1000. */
  maxQueuedMessages?: number;
  /** Requests forwarded and not yet answered, at most; one more is answered with `busy` here. Default: no limit. */
  maxInflight?: number;
  /** Told about every request answered: forwarded ones when their response arrives, refused ones at once. */
  observe?: CallObserver;
  /** The trace context on the client's WebSocket upgrade: the parent of its requests' spans. */
  trace?: TraceCarrier;
}

export interface PassthroughCounters {
  connections: number;
  invalidClientRequests: number;
  invalidUpstreamMessages: number;
}

export const newPassthroughCounters = (): PassthroughCounters => ({ connections: 0, invalidClientRequests: 0, invalidUpstreamMessages: 0 });

/** Close codes (RFC 6455 §7.4.1 and the IANA registry) and the reasons the client sees. */
const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  unsupportedData: 1003,
  policy: 1008,
  internalError: 1011,
  serviceRestart: 1012,
  tryAgainLater: 1013,
} as const;

const codec = TauCodec.shared();

/** Send options of every relayed message: a text frame, also when it is given as bytes. */
const TEXT_FRAME = { binary: false } as const;

export interface TauRelay {
  /** Closes both sides (client with `code`/`reason`, upstream with 1000). */
  close(code: number, reason: string): void;
  readonly closed: Promise<void>;
  /** Client requests accepted and not yet answered (a turn's `session.submit` until the turn settles), settling ones excluded. */
  readonly inflight: number;
}

export function relayTauConnection(client: WebSocket, options: TauPassthroughOptions): TauRelay {
  const log: Log = options.log ?? (() => undefined);
  const counters = options.counters ?? newPassthroughCounters();
  const maxQueued = options.maxQueuedMessages ?? 1000;
  const shownUrl = redactUrl(options.upstream.url);
  const connecting = new AbortController();
  /** Every request accepted and not yet answered (by the upstream, or by the tenant gate), and the in-flight limit. */
  const openRequests = new OpenRequests<RelayedRequestEnd | undefined>({ maxInflight: options.maxInflight });
  const observe: CallObserver = options.observe ?? (() => undefined);
  let queue: string[] | undefined = [];
  /** The upstream connection once ready; only what the relay uses of it (not its `ready`, for as long as the connection lives). */
  let upstream: Pick<OpenTauSocket, "socket" | "transport"> | undefined;
  let finished = false;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  counters.connections++;

  /** Sends a text frame: a string, or the UTF-8 bytes of a message passed on unchanged. */
  const sendToClient = (message: string | Buffer) => {
    if (client.readyState === WebSocket.OPEN) client.send(message, TEXT_FRAME);
  };
  /**
   * The message being handled now, as text and as the bytes it arrived in: what goes out unchanged
   * is sent as those bytes, instead of encoding its text again. (Equal text is equal bytes: `ws`
   * refuses a text frame that is not UTF-8, and UTF-8 decodes and encodes back exactly.)
   */
  let currentText: string | undefined;
  let currentBytes: Buffer | undefined;
  const asReceived = (text: string): string | Buffer => (text === currentText && currentBytes ? currentBytes : text);
  /** Runs `handle` with `text` and `bytes` as the message being handled now. */
  const whileHandling = <T extends string | undefined>(text: T, bytes: Buffer | undefined, handle: (text: T) => void) => {
    currentText = text;
    currentBytes = bytes;
    try {
      handle(text);
    } finally {
      currentText = currentBytes = undefined;
    }
  };
  const deliverToClient = (text: string) => sendToClient(asReceived(text));

  const finish = (clientClose: { code: number; reason: string } | undefined, upstreamCode = CLOSE.normal, upstreamReason = "client disconnected") => {
    if (finished) return;
    finished = true;
    queue = undefined;
    connecting.abort();
    // What is still open gets no answer through this relay any more: its spans end here.
    for (const open of openRequests.settleAll()) open.context?.("closed");
    if (clientClose && (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING)) {
      client.close(clientClose.code, truncateReason(clientClose.reason));
    }
    const socket = upstream?.socket;
    if (socket && (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING)) socket.close(upstreamCode, upstreamReason);
    markClosed();
  };

  const fromClient = (text: string, bytes?: Buffer) => whileHandling(text, bytes, checkAndForward);

  const checkAndForward = (text: string) => {
    const parsed = codec.parseRequest(text);
    if (!parsed.ok) {
      counters.invalidClientRequests++;
      log("debug", "invalid Tau request answered by the gateway", {
        code: parsed.error.code,
        message: parsed.error.message,
        ...(parsed.issues ? { method: parsed.method, issues: parsed.issues } : {}),
      });
      sendToClient(JSON.stringify(codec.error(parsed.id, parsed.error)));
      return;
    }
    const { id, method, params } = parsed.request;
    // Recorded before the tenant gate sees it: a request refused here (duplicate id, in-flight
    // limit) must not leave its mark on the gate, e.g. a session.create counted but never sent.
    const opened = openRequests.open(method, { id, context: traceRelayedRequest(method, params, options.trace) });
    if (!opened.ok) return refuse(id, method, opened.error);
    if (!options.gate) return forward(text);
    options.gate.request(parsed.request, text, (decision) => {
      if (finished) return;
      if ("answer" in decision) {
        openRequests.settle(id)?.context?.(decision.answer.code);
        sendToClient(JSON.stringify(codec.error(id, decision.answer)));
      } else {
        forward(decision.forward);
      }
    });
  };

  const refuse = (id: string, method: string, error: ErrorObject) => {
    // A duplicate id breaks a rule of the protocol (spec §2.1): an invalid request like any other.
    if (error.code === "invalid_request") counters.invalidClientRequests++;
    log("debug", "Tau request refused by the gateway", { id, method, code: error.code, message: error.message });
    sendToClient(JSON.stringify(codec.error(id, error)));
    observe({ dialect: "tau", method, outcome: error.code, seconds: 0 });
  };

  const forward = (text: string) => {
    // Requests forwarded in one tick (e.g. those queued while connecting) leave in one system call.
    corkUntilNextTick(upstream!.transport);
    upstream!.socket.send(asReceived(text), TEXT_FRAME);
  };

  const drop = (what: string, details: Record<string, unknown> = {}) => {
    counters.invalidUpstreamMessages++;
    log("warn", `Tau upstream sent an invalid message (not relayed): ${what}`, { upstream: shownUrl, ...details });
  };
  const settleOpen = (id: string) => openRequests.settle(id);

  const fromUpstream = (text: string | undefined, bytes: Buffer | undefined) => {
    if (!finished) whileHandling(text, bytes, checkAndRelay);
  };

  const checkAndRelay = (text: string | undefined) => {
    const parsed = codec.parseServerMessage(text, settleOpen);
    const answered = parsed.answers;
    if (answered) {
      // The code of a valid error response is one of Tau's few error codes (a bounded label).
      const response = parsed.ok && parsed.message.type === "response" ? parsed.message : undefined;
      const outcome = !parsed.ok ? "internal_error" : response && !response.ok ? response.error.code : "ok";
      observe({ dialect: "tau", method: answered.method, outcome, seconds: secondsSince(answered.startedAt) });
      answered.context?.(outcome);
    }
    if (!parsed.ok) {
      drop(parsed.problem, parsed.details);
      // The client still gets an answer to its request rather than waiting forever.
      if (answered) sendToClient(JSON.stringify(codec.error(answered.id, { code: "internal_error", message: `the Tau upstream sent an invalid response to ${answered.method}` })));
      return;
    }
    if (parsed.message.type === "ready") return drop("a second ready message");
    // Every request the client sent is open until its one response (the gateway's own answers close
    // theirs): a response with an id that matches none would be a second answer, or one to a request
    // never made, which a Tau client cannot place. An id-null error response is Tau's own and relayed.
    if (parsed.message.type === "response" && parsed.message.id !== null && !answered) {
      return drop("a response to no open request", { id: parsed.message.id });
    }
    if (options.gate) options.gate.message(parsed.message as unknown as Record<string, unknown>, parsed.text, answered?.method, deliverToClient);
    else deliverToClient(parsed.text);
  };

  const onClientMessage = (data: WebSocket.RawData, isBinary: boolean) => {
    if (finished) return;
    const text = messageText(data, isBinary);
    if (text === undefined) {
      counters.invalidClientRequests++;
      finish({ code: CLOSE.unsupportedData, reason: "session protocol requires text messages" });
      return;
    }
    if (queue) {
      if (queue.length >= maxQueued) {
        finish({ code: CLOSE.policy, reason: `more than ${maxQueued} messages before the upstream was ready` });
        return;
      }
      queue.push(text);
      return;
    }
    fromClient(text, Buffer.isBuffer(data) ? data : undefined);
  };

  client.on("message", (data, isBinary) => {
    try {
      onClientMessage(data, isBinary);
    } catch (err) {
      logFailure(log, err);
    }
  });
  client.on("close", (code) => guard(log, () => finish(undefined, CLOSE.normal, code === CLOSE.goingAway ? "client going away" : "client disconnected")));
  client.on("error", (err) => log("debug", "Tau client socket error", { error: err.message }));

  // Made here, not where the upstream opens: a closure made there would keep the opened socket's `ready` alive with it.
  const upstreamHandlers: TauSocketHandlers = {
    message: (text, bytes) => {
      try {
        fromUpstream(text, bytes);
      } catch (err) {
        logFailure(log, err);
      }
    },
    close: (code, reason) => guard(log, () => finish(clientCloseFor(code, reason), CLOSE.normal)),
  };
  const onUpstreamError = (err: Error) => log("debug", "Tau upstream socket error", { upstream: shownUrl, error: err.message });

  openTauSocket({ ...options.upstream, signal: connecting.signal }).then(
    (opened) =>
      guard(log, () => {
        if (finished) {
          opened.socket.close(CLOSE.normal, "client disconnected");
          return;
        }
        upstream = { socket: opened.socket, transport: opened.transport };
        sendToClient(opened.readyText);
        opened.attach(upstreamHandlers);
        opened.socket.on("error", onUpstreamError);
        const waiting = queue ?? [];
        queue = undefined;
        for (const text of waiting) {
          if (finished) break;
          fromClient(text);
        }
      }),
    (err: Error) =>
      guard(log, () => {
        if (finished) return;
        if (err instanceof UpstreamVersionError) {
          log("error", "Tau upstream speaks another protocol version", { upstream: shownUrl, version: err.version });
          finish({ code: CLOSE.internalError, reason: `upstream speaks Tau protocol ${JSON.stringify(err.version)}, not ${TAU_VERSION}` });
          return;
        }
        log("warn", "Tau upstream unreachable", { upstream: shownUrl, error: err.message });
        finish({ code: CLOSE.tryAgainLater, reason: "Tau upstream unavailable" });
      }),
  );

  return {
    close: (code, reason) => finish({ code, reason }, CLOSE.normal, "gateway shutting down"),
    closed,
    get inflight() {
      return finished ? 0 : openRequests.inflight;
    },
  };
}

/** What the client is told when the upstream side ends. */
function clientCloseFor(code: number, reason: string): { code: number; reason: string } {
  switch (code) {
    case CLOSE.normal:
    case CLOSE.goingAway:
      return { code: CLOSE.goingAway, reason: "Tau upstream closed the connection" };
    case CLOSE.serviceRestart:
      return { code: CLOSE.serviceRestart, reason: "Tau upstream is restarting" };
    case CLOSE.policy:
      // e.g. 1008 unauthorized: the gateway's upstream credentials, not the client's fault.
      return { code: CLOSE.internalError, reason: `Tau upstream refused the gateway (${code} ${reason})` };
    case CLOSE.internalError:
      return { code: CLOSE.internalError, reason: `Tau upstream error${reason ? `: ${reason}` : ""}` };
    default:
      // 1006 (connection lost without a close frame) and anything else: worth retrying later.
      return { code: CLOSE.tryAgainLater, reason: `Tau upstream connection lost (${code})` };
  }
}

/** Close reasons are limited to 123 bytes of UTF-8. */
function truncateReason(reason: string): string {
  let out = reason;
  while (Buffer.byteLength(out, "utf8") > 123) out = out.slice(0, -1);
  return out;
}

function guard(log: Log, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    logFailure(log, err);
  }
}

function logFailure(log: Log, err: unknown): void {
  log("error", "error in the Tau passthrough", { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
}
