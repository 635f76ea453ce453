import type { ClientInfo, ServerNotifications, ServerRequests } from "../../generated/ask-v1.0.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/** One Ask client connection, whatever carries it (WebSocket, stdio, HTTP + SSE). */
export interface AskPeer {
  readonly id: string;
  /** Tenant the connection authenticated as; sessions of other tenants do not exist for it. */
  readonly tenant?: string;
  /** Who the connection authenticated as (a token of the tokens file); undefined without tokens: its role is never checked. */
  readonly principal?: SessionPrincipal;
  /** What the client said in `initialize`. */
  capabilities: { reverseRequests: boolean };
  clientInfo?: ClientInfo;
  notify(method: "session/event", params: ServerNotifications["session/event"]): void;
  /** A reverse request; resolves with the client's answer (not yet checked against the result schema), rejects with its error. */
  request<M extends keyof ServerRequests>(method: M, params: ServerRequests[M]["params"], signal: AbortSignal): Promise<unknown>;
  readonly closed: boolean;
}
