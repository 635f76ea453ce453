import type { ClientInfo, RequestId, ServerNotifications, ServerRequests } from "../../generated/codex-v2.js";

/** What a connection said in `initialize`. */
export interface CodexClientState {
  initialized: boolean;
  clientInfo?: ClientInfo;
  /** capabilities.experimentalApi: experimental methods, fields and server requests are allowed. */
  experimentalApi: boolean;
  /** capabilities.optOutNotificationMethods. */
  optedOut: ReadonlySet<string>;
}

/** One Codex app-server client connection, whatever carries it (WebSocket, stdio). */
export interface CodexPeer {
  readonly id: string;
  /** Tenant the connection authenticated as; threads of other tenants do not exist for it. */
  readonly tenant?: string;
  client: CodexClientState;
  notify<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]): void;
  /** A server request; `answer` resolves with the client's result (not yet checked) and rejects with its error or when `signal` aborts. */
  request<M extends keyof ServerRequests>(method: M, params: ServerRequests[M]["params"], signal: AbortSignal): { id: RequestId; answer: Promise<unknown> };
  /**
   * Holds the connection's notifications back until the returned release is called; they then
   * follow in order, in a later write. (A turn's notifications must not reach the client before,
   * or in the same read as, the response that names the turn.)
   */
  holdNotifications(): () => void;
  readonly closed: boolean;
}
