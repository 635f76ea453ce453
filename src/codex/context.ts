import type { BridgeCore } from "../bridge/bridge-core.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { ToolConnections } from "./tool-connections.js";
import type { CodexPeer } from "./peer.js";
import type { ListedSessions } from "../bridge/listed-sessions.js";
import type { WorkspacePolicy } from "../bridge/session-workspace.js";
import type { ThreadDigest } from "./thread-digests.js";
import type { CodexThreads } from "./threads.js";

/** What every Codex method handler may use. */
export interface CodexServices {
  readonly core: BridgeCore;
  readonly threads: CodexThreads;
  /** What thread/list shows of threads no client here has loaded. */
  readonly threadDigests: ListedSessions<ThreadDigest>;
  /** Where threads may start (the cwd of one started without a cwd, and the workspace roots). */
  readonly workspaces: WorkspacePolicy;
  readonly serverVersion: string;
  /** The upstream connections that advertise clients' dynamic tools, shared by the threads with the same tools. */
  readonly toolConnections: ToolConnections;
  readonly log?: Log;
}

export interface CodexMethodContext {
  readonly services: CodexServices;
  readonly peer: CodexPeer;
  /** The request, as the cause of what it brings about (pass it to `peer.notify`, or to the thread it drives). */
  readonly cause?: RequestCause;
  /** Aborts when nobody waits for the answer any more: the connection closed, or the client cancelled the request. */
  readonly signal?: AbortSignal;
}
