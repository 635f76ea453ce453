import type { ClientRequests } from "../../generated/ask-v1.0.js";
import type { BridgeCore } from "../bridge/bridge-core.js";
import type { HostRouter } from "../bridge/hosts/host-router.js";
import type { HostedSessions } from "../bridge/hosts/hosted-sessions.js";
import type { AskPeer } from "./peer.js";
import type { SessionFactsReader } from "./session-facts.js";
import type { WorkspacePolicy } from "../bridge/session-workspace.js";
import type { Subscriptions } from "./subscriptions.js";

/** What every Ask method handler may use. */
export interface AskServices {
  /** What the Ask surface shares with the other dialects. */
  readonly core: BridgeCore;
  /** Tau requests, each sent to the host it belongs to. */
  readonly upstream: HostRouter;
  readonly sessions: HostedSessions;
  readonly subscriptions: Subscriptions;
  /** List facts of sessions the gateway has not opened. */
  readonly sessionFacts: SessionFactsReader;
  /** Working directories of new sessions: the default, relative paths, workspace roots. */
  readonly workspaces: WorkspacePolicy;
  /** Tool names session/create accepts. */
  readonly toolNames: ReadonlySet<string>;
  readonly serverVersion: string;
  readonly startedAt: number;
}

export interface MethodContext {
  readonly services: AskServices;
  readonly peer: AskPeer;
  /** Aborts when nobody waits for the answer any more: the connection closed, or the client cancelled the request. */
  readonly signal?: AbortSignal;
}

/** A handler receives params already validated against the registry and resolves with the method's result. */
export type MethodHandler<M extends keyof ClientRequests> = (
  ctx: MethodContext,
  params: ClientRequests[M]["params"],
) => Promise<ClientRequests[M]["result"]>;

/** One handler per Ask method of the registry: a method without one (or one the registry lacks) is a compile error. */
export type MethodHandlers = { [M in keyof ClientRequests]: MethodHandler<M> };
