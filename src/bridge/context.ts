import type { TauUpstream } from "../tau/upstream.js";
import type { BridgeCore } from "./bridge-core.js";
import type { AskPeer } from "./peer.js";
import type { SessionRegistry } from "./session-registry.js";
import type { Subscriptions } from "./subscriptions.js";

/** What every Ask method handler may use. */
export interface BridgeServices {
  /** What the Ask bridge shares with the other dialects. */
  readonly core: BridgeCore;
  readonly upstream: TauUpstream;
  readonly sessions: SessionRegistry;
  readonly subscriptions: Subscriptions;
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
