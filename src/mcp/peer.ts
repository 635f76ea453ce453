import type { ServerNotifications, ServerRequests } from "../../generated/mcp-v2025-11-25.js";

/** One MCP client connection, whatever carries it (stdio, a WebSocket, a Streamable HTTP session). */
export interface McpPeer {
  readonly id: string;
  /** Tenant the connection authenticated as; sessions of other tenants do not exist for it. */
  readonly tenant?: string;
  notify<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]): void;
  /**
   * A request to the client; resolves with its answer (not yet checked against the result schema),
   * rejects with its error, or when `signal` aborts (the client is then told with notifications/cancelled).
   */
  request<M extends keyof ServerRequests>(method: M, params: ServerRequests[M]["params"], signal: AbortSignal): Promise<unknown>;
  readonly closed: boolean;
}
