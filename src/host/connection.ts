import { randomUUID } from "node:crypto";
import type WebSocket from "ws";
import type { ReadyMessage } from "../../generated/tau-v18.js";
import { messageText } from "../tau/connection.js";
import { CANCEL_CAUSES } from "./cancel-causes.js";
import type { ClientConnection, HostContext, RequestContext } from "./host-context.js";
import { handlers } from "./methods/index.js";
import { sendMessage, type OutgoingOptions } from "./outgoing.js";
import { sessionNotFound, toWireError } from "./protocol-error.js";
import type { SessionRuntime } from "./session-runtime.js";
import type { SessionStreamMessage } from "./session-state.js";
import { errorText } from "../shared/unknown-values.js";

/** A session this connection receives streams for. */
interface Subscription {
  unsubscribe(): void;
  /** Non-null while an observe builds its baselines: stream messages wait here. */
  buffer: SessionStreamMessage[] | null;
}

/**
 * One client WebSocket: `ready` first, then every text message parsed by the Tau codec and
 * dispatched concurrently; responses and stream messages go out in generation order. Closing the
 * socket detaches the client (its tools, subscriptions, execs and samples) but leaves turns running.
 */
export class HostConnection implements ClientConnection {
  readonly id = randomUUID();
  /** Set by the first successful initialize. */
  initialized = false;
  private readonly sideWork = new Set<AbortController>();
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly outgoing: OutgoingOptions;
  private closed = false;
  /** Set once the host decided to close the socket: later messages are not read. */
  private refusing = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly host: HostContext,
  ) {
    this.outgoing = { codec: host.codec, validate: host.options.validateOutgoing, log: host.options.log };
  }

  start(): void {
    this.host.connections.set(this.id, this);
    this.socket.on("message", (data, isBinary) => {
      if (this.closed || this.refusing) return;
      const text = messageText(data, isBinary);
      if (text === undefined) {
        this.refusing = true;
        this.socket.close(1003, "session protocol requires text messages");
        return;
      }
      this.handle(text).catch((err: unknown) => {
        this.host.options.log(`connection ${this.id}: request handling failed: ${(err as Error).message}`);
        this.refusing = true;
        this.socket.close(1011, "session protocol request failed");
      });
    });
    this.socket.on("close", () => this.detach());
    this.socket.on("error", (err) => this.host.options.log(`connection ${this.id}: ${err.message}`));
    const ready: ReadyMessage = { version: 18, type: "ready", methods: this.host.methods };
    this.send(ready);
  }

  /** Sends one server message (checked in development mode). */
  send(message: object, respondsTo?: string): void {
    sendMessage(this.socket, message, this.outgoing, respondsTo);
  }

  /** Server shutdown: drop the socket without a close handshake (as `tau serve` does). */
  terminate(): void {
    this.socket.terminate();
    this.detach();
  }

  isSubscribed(sessionId: string): boolean {
    return this.subscriptions.has(sessionId);
  }

  /** Subscribes to a session's streams (idempotent). */
  subscribe(session: SessionRuntime): void {
    if (this.subscriptions.has(session.id)) return;
    const subscription: Subscription = {
      buffer: null,
      unsubscribe: session.state.subscribe((message) => {
        if (subscription.buffer) subscription.buffer.push(message);
        else this.send(message);
      }),
    };
    this.subscriptions.set(session.id, subscription);
  }

  unsubscribe(sessionId: string): void {
    this.subscriptions.get(sessionId)?.unsubscribe();
    this.subscriptions.delete(sessionId);
  }

  /**
   * Holds back a session's stream messages while an observe builds its baselines; the returned
   * function sends those that `isNewer` accepts and resumes direct delivery.
   */
  holdStream(sessionId: string): (isNewer: (message: SessionStreamMessage) => boolean) => void {
    const subscription = this.subscriptions.get(sessionId);
    if (!subscription) return () => {};
    subscription.buffer ??= [];
    return (isNewer) => {
      const held = subscription.buffer ?? [];
      subscription.buffer = null;
      for (const message of held) if (isNewer(message)) this.send(message);
    };
  }

  /** Registers an exec or sample so a disconnect cancels it. */
  trackSideWork(controller: AbortController): () => void {
    this.sideWork.add(controller);
    return () => this.sideWork.delete(controller);
  }

  private async handle(text: string): Promise<void> {
    const parsed = this.host.codec.parseRequest(text);
    if (!parsed.ok) {
      // The client gets Tau's one sentence; what exactly is wrong is for the operator.
      if (parsed.issues) this.host.options.log(`connection ${this.id}: invalid ${String(parsed.method)} params: ${parsed.issues.join("; ")}`);
      this.send(this.host.codec.error(parsed.id, parsed.error));
      return;
    }
    const { id, method, params } = parsed.request;
    const after: Array<() => void> = [];
    const ctx: RequestContext = {
      host: this.host,
      connection: this,
      session: (sessionId) => this.useSession(sessionId),
      afterResponse: (action) => after.push(action),
    };
    let result: unknown;
    try {
      const handler = handlers[method as keyof typeof handlers] as (ctx: RequestContext, params: unknown) => unknown;
      result = await handler(ctx, params);
    } catch (err) {
      if (!(err instanceof Error && err.name === "ProtocolError")) {
        this.host.options.log(`connection ${this.id}: ${method} failed: ${errorText(err)}`);
      }
      try {
        this.send(this.host.codec.error(id, toWireError(err)), method);
      } finally {
        for (const action of after) action();
      }
      return;
    }
    try {
      this.send(this.host.codec.success(id, result), method);
    } finally {
      for (const action of after) action();
    }
  }

  /**
   * The first request naming a session registers it on this connection (until unobserve): the
   * client's tools are attached, then its streams subscribed. A refused attachment (a tool name
   * another attached client provides) registers nothing, and tools advertised later are not
   * attached to sessions registered before (spec §7.2).
   */
  private useSession(sessionId: string): SessionRuntime {
    const session = this.host.sessions.get(sessionId);
    if (!session) throw sessionNotFound(sessionId);
    if (this.subscriptions.has(session.id)) return session;
    this.host.broker.attach(this.id, sessionId);
    this.subscribe(session);
    return session;
  }

  private detach(): void {
    if (this.closed) return;
    this.closed = true;
    this.host.connections.delete(this.id);
    for (const sessionId of [...this.subscriptions.keys()]) this.unsubscribe(sessionId);
    this.host.broker.disconnect(this.id);
    for (const controller of this.sideWork) controller.abort(CANCEL_CAUSES.disconnect);
  }
}
