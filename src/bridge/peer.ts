import type { SessionEventParams } from "../../generated/ask-v1.0.js";

/** One Ask client connection, whatever carries it (WebSocket, stdio, HTTP + SSE). */
export interface AskPeer {
  readonly id: string;
  /** Tenant the connection authenticated as; sessions of other tenants do not exist for it. */
  readonly tenant?: string;
  /** What the client said in `initialize`. */
  capabilities: { reverseRequests: boolean };
  clientInfo?: { name?: string; version?: string };
  notify(method: "session/event", params: SessionEventParams): void;
  /** A reverse request; resolves with the client's result, rejects with its error. */
  request(method: "interaction/requestPermission" | "interaction/requestUserInput", params: object, signal: AbortSignal): Promise<unknown>;
  readonly closed: boolean;
}
