import type { MethodName } from "../../generated/tau-v18.js";
import type { TauCodec } from "../tau/codec.js";
import type { ClientToolBroker } from "./client-tool-broker.js";
import type { HostConnection } from "./connection.js";
import type { ResolvedHostOptions } from "./host-options.js";
import type { SessionRegistry } from "./session-registry.js";
import type { SessionRuntime } from "./session-runtime.js";

/** What every connection and method handler shares within one running host. */
export interface HostContext {
  readonly options: ResolvedHostOptions;
  readonly codec: TauCodec;
  /** The methods `ready` and `initialize` advertise, in Tau's order. */
  readonly methods: MethodName[];
  readonly sessions: SessionRegistry;
  readonly broker: ClientToolBroker;
  readonly connections: Map<string, HostConnection>;
}

/** One request being handled. */
export interface RequestContext {
  readonly host: HostContext;
  readonly connection: HostConnection;
  /**
   * The session a request names: unknown → `not_found`; otherwise this connection is subscribed
   * to its streams and its client tools are attached to it (spec §9, §7.2).
   */
  session(sessionId: string): SessionRuntime;
  /** Runs after the success response has been sent (observe flushes buffered updates then). */
  afterResponse(action: () => void): void;
}

export type MethodHandler<P = never> = (ctx: RequestContext, params: P) => unknown;
