import type { ServerNotifications, ServerRequests } from "../../generated/acp-v1.js";

/** One ACP client connection, whatever carries it (stdio, WebSocket). */
export interface AcpPeer {
  readonly id: string;
  /** Tenant the connection authenticated as; sessions of other tenants do not exist for it. */
  readonly tenant?: string;
  notify(method: "session/update", params: ServerNotifications["session/update"]): void;
  /** A request to the client; resolves with its answer (not yet checked against the result schema), rejects with its error or when `signal` aborts. */
  request<M extends keyof ServerRequests>(method: M, params: ServerRequests[M]["params"], signal: AbortSignal): Promise<unknown>;
  readonly closed: boolean;
}
