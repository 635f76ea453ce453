import type { TauUpstream } from "../tau/upstream.js";
import type { AskPeer } from "./peer.js";
import type { SessionFactsReader } from "./session-facts.js";
import type { SessionRegistry } from "./session-registry.js";
import type { Subscriptions } from "./subscriptions.js";

/** What every Ask method handler may use. */
export interface BridgeServices {
  readonly upstream: TauUpstream;
  readonly sessions: SessionRegistry;
  readonly subscriptions: Subscriptions;
  /** List facts of sessions the gateway has not opened. */
  readonly sessionFacts: SessionFactsReader;
  /** cwd for sessions created without `workspace.workspacePath`. */
  readonly defaultCwd: string;
  readonly serverVersion: string;
  readonly startedAt: number;
}

export interface MethodContext {
  readonly services: BridgeServices;
  readonly peer: AskPeer;
}

/** A handler receives params already validated against the registry. */
export type MethodHandler = (ctx: MethodContext, params: never) => Promise<unknown>;
