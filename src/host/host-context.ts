import type { MethodName } from "../../generated/tau-v18.js";
import type { TauCodec } from "../tau/codec.js";
import type { ClientToolBroker } from "./client-tool-broker.js";
import type { ResolvedHostOptions } from "./host-options.js";
import type { SessionRegistry } from "./session-registry.js";
import type { SessionRuntime } from "./session-runtime.js";
import type { SessionStreamMessage } from "./session-state.js";

/** What every connection and method handler shares within one running host. */
export interface HostContext {
  readonly options: ResolvedHostOptions;
  readonly codec: TauCodec;
  /** The methods `ready` and `initialize` advertise, in Tau's order. */
  readonly methods: MethodName[];
  readonly sessions: SessionRegistry;
  readonly broker: ClientToolBroker;
  readonly connections: Map<string, ClientConnection>;
}

/**
 * One client WebSocket as the host and the method handlers see it. The socket-owning class
 * (HostConnection) implements it, and it dispatches to the handlers, so the handlers know only
 * this interface.
 */
export interface ClientConnection {
  readonly id: string;
  /** Set by the first successful initialize. */
  initialized: boolean;
  /** Sends one server message. */
  send(message: object, respondsTo?: string): void;
  /** Drops the socket without a close handshake and detaches the client. */
  terminate(): void;
  isSubscribed(sessionId: string): boolean;
  unsubscribe(sessionId: string): void;
  /**
   * Holds back a session's stream messages while an observe builds its baselines; the returned
   * function sends those that `isNewer` accepts and resumes direct delivery.
   */
  holdStream(sessionId: string): (isNewer: (message: SessionStreamMessage) => boolean) => void;
  /** Registers an exec or sample so a disconnect cancels it; returns the release. */
  trackSideWork(controller: AbortController): () => void;
}

/** One request being handled. */
export interface RequestContext {
  readonly host: HostContext;
  readonly connection: ClientConnection;
  /**
   * The session a request names: unknown → `not_found`; otherwise this connection is subscribed
   * to its streams and its client tools are attached to it (spec §9, §7.2).
   */
  session(sessionId: string): SessionRuntime;
  /** Runs after the success response has been sent (observe flushes buffered updates then). */
  afterResponse(action: () => void): void;
}

export type MethodHandler<P = never> = (ctx: RequestContext, params: P) => unknown;
