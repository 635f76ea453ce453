import type { ClientRequests, ClientToolDefinition, InitializeParams, InitializeResult, ReadyMessage, ResponseMessage, ServerMessage } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import { inSpan } from "../shared/tracing.js";
import { TauCodec } from "./codec.js";
import { DEFAULT_CONNECT_TIMEOUT_MS, openTauSocket, redactUrl, TauConnectError, UpstreamVersionError, type OpenTauSocket } from "./connection.js";
import { abortError, OpenRequests } from "./open-requests.js";
import { tauFailure, tauRequestSpan } from "./tau-span.js";
import { TauResponseError, UpstreamUnavailableError } from "./upstream-errors.js";

export { UpstreamVersionError } from "./connection.js";
export { TauResponseError, UpstreamUnavailableError } from "./upstream-errors.js";

/**
 * The gateway's own long-lived connection to a Tau host and its reconnects. Request ids,
 * correlation, timeouts and cancellation belong to the open-request table (open-requests.ts), and
 * every message is read by the codec (codec.ts), as for the `/tau` relay. Everything it receives is
 * schema-checked before anyone sees it; nothing thrown by a listener or a malformed message escapes
 * into the socket's event handlers.
 *
 * Tau has no per-request cancel and no replay (spec §9): when the connection drops, every open
 * request is rejected at once, the connection is re-established with exponential backoff and
 * jitter, `initialize` is sent again (client tools are tied to a connection), and `onConnected`
 * listeners re-observe whatever they need.
 */

/** Every server message except `ready` and responses: the streams a connection observes. */
export type UpstreamServerMessage = Exclude<ServerMessage, ReadyMessage | ResponseMessage>;

export interface TauUpstreamOptions {
  /** ws://HOST:PORT */
  url: string;
  /** Sent as ?tau_token=…; never logged. */
  token?: string;
  client: { name: string; version: string; tools?: ClientToolDefinition[] };
  /** Default true: exponential backoff 100 ms … 5 s with jitter. */
  reconnect?: boolean;
  /** Default 5000; covers connecting, `ready` and the `initialize` answer. */
  connectTimeoutMs?: number;
  log?: Log;
}

type State = "idle" | "connecting" | "connected" | "waiting" | "refused" | "closed";

/** The caller's promise, kept with its open request. */
interface Waiter {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

const MIN_RECONNECT_DELAY_MS = 100;
const MAX_RECONNECT_DELAY_MS = 5_000;
/** A silent peer (half-open TCP) is noticed after at most two intervals. */
const KEEPALIVE_INTERVAL_MS = 15_000;
const CLOSE_WAIT_MS = 2_000;

/** Delay before reconnect attempt `attempt` (0-based): doubling from 100 ms up to 5 s, each randomised to 50–100 % of its step, never below 100 ms. */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(MAX_RECONNECT_DELAY_MS, MIN_RECONNECT_DELAY_MS * 2 ** Math.min(attempt, 16));
  return Math.max(MIN_RECONNECT_DELAY_MS, Math.round(step * (0.5 + random() / 2)));
}

export class TauUpstream {
  private readonly options: TauUpstreamOptions;
  private readonly log: Log;
  private readonly shownUrl: string;
  private readonly codec = TauCodec.shared();
  private readonly messageListeners = new Set<(message: UpstreamServerMessage) => void>();
  private readonly connectedListeners = new Set<(event: { reconnected: boolean }) => void>();
  private readonly disconnectedListeners = new Set<(reason: string) => void>();
  private readonly open = new OpenRequests<Waiter>({ idPrefix: "gw-" });
  private readonly counters = { reconnects: 0, invalidMessages: 0 };

  private state: State = "idle";
  private current: OpenTauSocket | undefined;
  /** Increments per socket, so events of a replaced socket are recognised and ignored. */
  private generation = 0;
  private attempt = 0;
  private everConnected = false;
  private reason: string | undefined = "not started";
  private startPromise: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private connectAbort = new AbortController();

  constructor(options: TauUpstreamOptions) {
    this.options = options;
    this.log = options.log ?? (() => undefined);
    this.shownUrl = redactUrl(options.url);
  }

  /** Connects, checks ready.version === 18, sends initialize (with the tools). Resolves when usable. */
  start(): Promise<void> {
    this.startPromise ??= this.connect(false).catch((err: Error) => {
      if (this.state !== "closed") {
        this.state = err instanceof UpstreamVersionError ? "refused" : "idle";
        // The caller may try again later (e.g. after fixing the upstream).
        this.startPromise = undefined;
      }
      throw err;
    });
    return this.startPromise;
  }

  get connected(): boolean {
    return this.state === "connected";
  }

  /** The Tau host's address as given (the token travels separately). */
  get url(): string {
    return this.options.url;
  }

  /** Why the upstream is not usable right now (undefined while connected), for health reports. */
  get unavailableReason(): string | undefined {
    return this.state === "connected" ? undefined : this.reason;
  }

  get stats(): { reconnects: number; invalidMessages: number } {
    return { ...this.counters };
  }

  /** Requests sent and not yet answered (turn requests stay open until the turn settles). */
  get openRequests(): number {
    return this.open.size;
  }

  /**
   * Sends a request (id "gw-<n>"), resolves with the validated result, rejects TauResponseError /
   * UpstreamUnavailableError. An aborted signal rejects at once (the upstream request keeps
   * running — Tau has no per-request cancel).
   */
  request<M extends keyof ClientRequests>(
    method: M,
    params: ClientRequests[M]["params"],
    options: { signal?: AbortSignal } = {},
  ): Promise<ClientRequests[M]["result"]> {
    if (options.signal?.aborted) return Promise.reject(abortError(options.signal, method));
    if (this.state !== "connected") {
      return Promise.reject(new UpstreamUnavailableError(`Tau upstream is not connected (${this.reason ?? this.state})`));
    }
    return this.send<ClientRequests[M]["result"]>(method, params, options);
  }

  /** Every non-response server message, after schema validation (invalid ones are logged, counted, dropped). */
  onMessage(listener: (message: UpstreamServerMessage) => void): () => void {
    this.messageListeners.add(listener);
    return () => this.messageListeners.delete(listener);
  }

  /** After each successful (re)initialize. */
  onConnected(listener: (event: { reconnected: boolean }) => void): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
  }

  /** When a usable connection is lost; open requests have already been rejected with UpstreamUnavailableError. */
  onDisconnected(listener: (reason: string) => void): () => void {
    this.disconnectedListeners.add(listener);
    return () => this.disconnectedListeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.state === "closed") return;
    const wasConnected = this.state === "connected";
    this.state = "closed";
    this.reason = "the gateway closed its upstream connection";
    clearTimeout(this.reconnectTimer);
    this.connectAbort.abort();
    this.stopKeepalive();
    const socket = this.current?.socket;
    this.current = undefined;
    this.generation++;
    this.rejectOpen(this.reason);
    if (wasConnected) this.emitDisconnected(this.reason);
    if (socket && socket.readyState !== socket.CLOSED) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          socket.terminate();
          resolve();
        }, CLOSE_WAIT_MS);
        socket.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
        socket.close(1000, "gateway shutting down");
      });
    }
  }

  // --- connecting -------------------------------------------------------------------------------

  /** One attempt: socket + ready + initialize. On failure the attempt's socket is gone. */
  private async connect(reconnected: boolean): Promise<void> {
    if (this.state === "closed") throw new UpstreamUnavailableError("Tau upstream connection is closed");
    this.state = "connecting";
    const timeoutMs = this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    let opened: OpenTauSocket;
    try {
      opened = await openTauSocket({ url: this.options.url, token: this.options.token, connectTimeoutMs: timeoutMs, signal: this.connectAbort.signal });
    } catch (err) {
      this.reason = (err as Error).message;
      throw err instanceof TauConnectError ? new UpstreamUnavailableError(err.message) : err;
    }
    // State changes while awaiting (close() may have run); read it afresh.
    if (this.currentState() === "closed") {
      opened.socket.terminate();
      throw new UpstreamUnavailableError("Tau upstream connection is closed");
    }
    const generation = ++this.generation;
    this.current = opened;
    opened.socket.on("pong", () => (this.awaitingPong = false));
    opened.attach({
      message: (text) => this.guard(() => this.receive(generation, text)),
      close: (code, reason) => this.guard(() => this.socketClosed(generation, code, reason)),
    });

    const { name, version, tools } = this.options.client;
    const params: InitializeParams = { client: { name, version, ...(tools ? { tools } : {}) } };
    try {
      await this.send<InitializeResult>("initialize", params, { timeoutMs });
    } catch (err) {
      if (generation === this.generation) {
        this.current = undefined;
        this.generation++;
        opened.socket.terminate();
        this.rejectOpen(`initialize failed: ${(err as Error).message}`);
      }
      this.reason = `initialize failed: ${(err as Error).message}`;
      throw err;
    }
    if (generation !== this.generation || this.currentState() !== "connecting") {
      throw new UpstreamUnavailableError(`Tau upstream connection was lost during initialize (${this.reason})`);
    }

    this.state = "connected";
    this.reason = undefined;
    this.attempt = 0;
    this.everConnected = true;
    if (reconnected) this.counters.reconnects++;
    this.startKeepalive(generation);
    this.log("info", reconnected ? "Tau upstream reconnected" : "Tau upstream connected", { url: this.shownUrl });
    for (const listener of [...this.connectedListeners]) this.guard(() => listener({ reconnected }));
  }

  private socketClosed(generation: number, code: number, reason: string): void {
    if (generation !== this.generation) return;
    const wasConnected = this.state === "connected";
    this.current = undefined;
    this.generation++;
    this.stopKeepalive();
    const why = `upstream connection closed (${code}${reason ? ` ${reason}` : ""})`;
    this.reason = why;
    this.rejectOpen(why);
    // A close during `connecting` fails that attempt (its initialize was just rejected); the
    // attempt's caller decides what happens next.
    if (!wasConnected) return;
    this.state = "idle";
    this.log("warn", "Tau upstream disconnected", { url: this.shownUrl, code, reason });
    this.emitDisconnected(why);
    if (this.options.reconnect !== false) this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.state === "closed" || !this.everConnected) return;
    const delay = reconnectDelay(this.attempt++);
    this.state = "waiting";
    this.log("debug", "Tau upstream reconnect scheduled", { url: this.shownUrl, delayMs: delay, attempt: this.attempt });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect(true).catch((err: Error) => {
        if (this.state === "closed") return;
        if (err instanceof UpstreamVersionError) {
          // A host that now speaks another version will not change back by itself.
          this.state = "refused";
          this.reason = err.message;
          this.log("error", "Tau upstream refused: protocol version mismatch; not reconnecting", { url: this.shownUrl, version: err.version });
          return;
        }
        this.log("warn", "Tau upstream reconnect failed", { url: this.shownUrl, error: err.message });
        this.scheduleReconnect();
      });
    }, delay);
  }

  // --- requests and messages --------------------------------------------------------------------

  /** `timeoutMs`: give up waiting (rejecting UpstreamUnavailableError) if no answer came by then. */
  private send<R>(method: string, params: object, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<R> {
    return inSpan(() => tauRequestSpan(method, params), () => this.sendNow<R>(method, params, options), tauFailure);
  }

  private sendNow<R>(method: string, params: object, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<R> {
    const socket = this.current?.socket;
    if (!socket || socket.readyState !== socket.OPEN) {
      return Promise.reject(new UpstreamUnavailableError(`Tau upstream is not connected (${this.reason ?? this.state})`));
    }
    return new Promise<R>((resolve, reject) => {
      const opened = this.open.open(method, {
        context: { resolve: (result) => resolve(result as R), reject },
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        onGiveUp: (why) =>
          reject(why.reason === "aborted" ? why.error : new UpstreamUnavailableError(`no ${method} answer from ${this.shownUrl} within ${why.timeoutMs} ms`)),
      });
      if (!opened.ok) return reject(new TauResponseError(method, opened.error.code, opened.error.message));
      const { id } = opened.request;
      socket.send(this.codec.encodeRequest(id, method, params), (err) => {
        if (!err) return;
        this.open.settle(id);
        reject(new UpstreamUnavailableError(`could not send ${method} to the Tau upstream: ${err.message}`));
      });
    });
  }

  private receive(generation: number, text: string | undefined): void {
    if (generation !== this.generation) return;
    const parsed = this.codec.parseServerMessage(text, (id) => this.open.settle(id));
    const request = parsed.answers;
    if (!parsed.ok) {
      this.invalid(parsed.problem, parsed.details);
      // Dropping it would leave the caller waiting forever; fail the request instead.
      request?.context.reject(new TauResponseError(request.method, "internal_error", `the Tau upstream sent an invalid response to ${request.method}`, parsed.details));
      return;
    }
    const msg = parsed.message;
    if (msg.type === "response") {
      if (!request) {
        // id null: the host could not read one of our requests (a gateway bug worth seeing).
        this.log(msg.id === null ? "error" : "debug", "Tau upstream response matches no open request", { id: msg.id, error: msg.ok ? undefined : msg.error });
      } else if (msg.ok) {
        request.context.resolve(msg.result);
      } else {
        request.context.reject(new TauResponseError(request.method, msg.error.code, msg.error.message, msg.error.data));
      }
      return;
    }
    if (msg.type === "ready") {
      this.log("warn", "Tau upstream sent a second ready message; ignored", { url: this.shownUrl });
      return;
    }
    for (const listener of [...this.messageListeners]) this.guard(() => listener(msg));
  }

  private invalid(what: string, fields: Record<string, unknown> = {}): void {
    this.counters.invalidMessages++;
    this.log("warn", `Tau upstream sent an invalid message (dropped): ${what}`, { url: this.shownUrl, ...fields });
  }

  private rejectOpen(reason: string): void {
    for (const request of this.open.settleAll()) request.context.reject(new UpstreamUnavailableError(`${request.method}: ${reason}`));
  }

  private emitDisconnected(reason: string): void {
    for (const listener of [...this.disconnectedListeners]) this.guard(() => listener(reason));
  }

  // --- keepalive ------------------------------------------------------------------------------

  private awaitingPong = false;

  private startKeepalive(generation: number): void {
    this.stopKeepalive();
    this.awaitingPong = false;
    this.keepaliveTimer = setInterval(() => {
      const socket = this.current?.socket;
      if (generation !== this.generation || !socket) return;
      if (this.awaitingPong) {
        this.log("warn", "Tau upstream did not answer a ping; dropping the connection", { url: this.shownUrl });
        socket.terminate();
        return;
      }
      this.awaitingPong = true;
      socket.ping();
    }, KEEPALIVE_INTERVAL_MS);
    this.keepaliveTimer.unref();
  }

  private stopKeepalive(): void {
    clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = undefined;
  }

  private currentState(): State {
    return this.state;
  }

  /** Listener and handler faults are logged, never thrown into `ws` event handlers. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log("error", "error in a Tau upstream handler", { error: err instanceof Error ? err.stack ?? err.message : String(err) });
    }
  }
}
