import type { RequestId, ServerNotifications, ServerRequests } from "../../generated/mcp-v2025-11-25.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/** One MCP client connection, whatever carries it (stdio, a WebSocket, a Streamable HTTP session). */
export interface McpPeer {
  readonly id: string;
  /** Tenant the connection authenticated as; sessions of other tenants do not exist for it. */
  readonly tenant?: string;
  /** Who the connection authenticated as (a token of the tokens file); undefined without tokens: its role is never checked. */
  readonly principal?: SessionPrincipal;
  /**
   * A notification; `relatedRequestId`: the client's request it is part of (a tool call's
   * progress), which Streamable HTTP sends on that request's response stream (the SDK's name).
   */
  notify<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M], relatedRequestId?: RequestId): void;
  /**
   * A request to the client, part of the client's request `relatedRequestId` when given (a form a
   * tool call's turn waits for); resolves with its answer (not yet checked against the result
   * schema), rejects with its error, or when `signal` aborts (the client is then told with
   * notifications/cancelled, on the same stream as the request).
   */
  request<M extends keyof ServerRequests>(method: M, params: ServerRequests[M]["params"], signal: AbortSignal, relatedRequestId?: RequestId): Promise<unknown>;
  readonly closed: boolean;
}
