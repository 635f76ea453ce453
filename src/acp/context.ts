import type { BridgeCore } from "../bridge/bridge-core.js";
import type { ListedSessions } from "../bridge/listed-sessions.js";
import type { WorkspacePolicy } from "../bridge/session-workspace.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { AcpClient } from "./client-state.js";
import type { ListedSession } from "./listed-session.js";
import type { SessionLinks } from "./session-links.js";

/** What every ACP method handler may use. */
export interface AcpServices {
  readonly core: BridgeCore;
  readonly links: SessionLinks;
  /** What session/list shows of each session. */
  readonly listed: ListedSessions<ListedSession>;
  /** Where sessions may start (the workspace roots). */
  readonly workspaces: WorkspacePolicy;
  readonly serverVersion: string;
  readonly log?: Log;
}

export interface AcpMethodContext {
  readonly services: AcpServices;
  readonly client: AcpClient;
  /** The request, as the cause of what it brings about (none for a notification of the client). */
  readonly cause?: RequestCause;
  /** Aborts when nobody waits for the answer any more: the connection closed, or the client cancelled the request. */
  readonly signal?: AbortSignal;
}
