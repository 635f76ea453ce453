import type { ClientInfo, RequestId, ServerNotifications, ServerRequests } from "../../generated/codex-v2.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/** What a connection said in `initialize`. */
export interface CodexClientState {
  initialized: boolean;
  clientInfo?: ClientInfo;
  /** capabilities.experimentalApi: experimental methods, fields and server requests are allowed. */
  experimentalApi: boolean;
  /** capabilities.optOutNotificationMethods. */
  optedOut: ReadonlySet<string>;
  /** capabilities.tauGatewayRelay: a `--remote` relay's connection (relay-positions.ts). */
  relayed?: boolean;
}

/** One Codex app-server client connection, whatever carries it (WebSocket, stdio). */
export interface CodexPeer {
  readonly id: string;
  /** Tenant the connection authenticated as; threads of other tenants do not exist for it. */
  readonly tenant?: string;
  /** Who the connection authenticated as (a token of the tokens file); undefined without tokens: its role is never checked. */
  readonly principal?: SessionPrincipal;
  client: CodexClientState;
  /** A notification; `causedBy`: the request of this connection that brought it about (see RequestCause). */
  notify<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M], causedBy?: RequestCause): void;
  /**
   * A server request (`causedBy` as for `notify`); `answer` resolves with the client's result (not
   * yet checked) and rejects with its error or when `signal` aborts.
   */
  request<M extends keyof ServerRequests>(
    method: M,
    params: ServerRequests[M]["params"],
    signal: AbortSignal,
    causedBy?: RequestCause,
  ): { id: RequestId; answer: Promise<unknown> };
  readonly closed: boolean;
}
