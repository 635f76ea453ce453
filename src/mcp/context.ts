import type { BridgeCore } from "../bridge/bridge-core.js";
import type { ListedSessions } from "../bridge/listed-sessions.js";
import type { WorkspacePolicy } from "../bridge/session-workspace.js";
import type { Log } from "../shared/log.js";
import type { McpClient } from "./client-state.js";
import type { ListedSession } from "./listed-session.js";
import type { SessionWatches } from "./session-watches.js";

/** What every MCP method handler may use. */
export interface McpServices {
  readonly core: BridgeCore;
  /** Which connections work with which sessions (elicitation, resource subscriptions). */
  readonly watches: SessionWatches;
  /** What tau-sessions and resources/list show of each session. */
  readonly listed: ListedSessions<ListedSession>;
  /** Where sessions may start (the workspace roots). */
  readonly workspaces: WorkspacePolicy;
  readonly serverVersion: string;
  readonly log?: Log;
}

export interface McpMethodContext {
  readonly services: McpServices;
  readonly client: McpClient;
  /** The request's JSON-RPC id (none for a notification), which notifications/cancelled names. */
  readonly requestId?: string | number;
  /** Aborts when nobody waits for the answer any more: the connection closed, or the client cancelled the request. */
  readonly signal?: AbortSignal;
}
