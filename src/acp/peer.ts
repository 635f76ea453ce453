import type { ServerNotifications, ServerRequests } from "../../generated/acp-v1.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/** One ACP client connection, whatever carries it (stdio, WebSocket). */
export interface AcpPeer {
  readonly id: string;
  /** Tenant the connection authenticated as; sessions of other tenants do not exist for it. */
  readonly tenant?: string;
  /** Who the connection authenticated as (a token of the tokens file); undefined without tokens: its role is never checked. */
  readonly principal?: SessionPrincipal;
  /** A notification; `causedBy`: the request of this connection that brought it about (see RequestCause). */
  notify(method: "session/update", params: ServerNotifications["session/update"], causedBy?: RequestCause): void;
  /**
   * A request to the client (`causedBy` as for `notify`); resolves with its answer (not yet checked
   * against the result schema), rejects with its error or when `signal` aborts.
   */
  request<M extends keyof ServerRequests>(method: M, params: ServerRequests[M]["params"], signal: AbortSignal, causedBy?: RequestCause): Promise<unknown>;
  readonly closed: boolean;
}
