/**
 * Limits that keep one client from exhausting the gateway (DESIGN §6). The message size limit is
 * `GatewayConfig.maxMessageBytes`; these are the others.
 */
export interface GatewayLimits {
  /** Open WebSocket connections, all routes together; one more is refused with HTTP 503 before the upgrade. */
  maxConnections: number;
  /** Requests of one connection waiting for their answers; one more is refused (Ask -32013 overloaded, Tau `busy`). */
  maxInflight: number;
  /**
   * Bytes already queued for a client that has not read them; a client past this when the gateway
   * has more to send is disconnected with 1013 (one message may exceed it, so large answers still go).
   */
  maxBufferedBytes: number;
  /** WebSocket ping interval; a peer that has not answered the previous ping by the next is terminated. 0 = no pings. */
  keepaliveMs: number;
  /**
   * A TCP connection with no request in progress that sends nothing for this long is closed: one
   * that never speaks, or an idle keep-alive connection. WebSockets and event streams are kept
   * alive by pings and heartbeats instead. 0 = never.
   */
  idleTimeoutMs: number;
  /** Time a client gets to send a request's headers (WebSocket upgrades included); then 408 and close. 0 = Node's default. */
  headersTimeoutMs: number;
  /** Time a client gets to send a whole request, body included; then 408 and close. 0 = never. */
  requestTimeoutMs: number;
  /**
   * Open TCP connections from one client address; one more is closed at once. Peers trusted as
   * proxies (`trustProxy`) are exempt: every client behind them shares their address. 0 = no cap.
   */
  maxConnectionsPerAddress: number;
}

export const DEFAULT_LIMITS: GatewayLimits = {
  maxConnections: 1024,
  maxInflight: 64,
  maxBufferedBytes: 8 * 1024 * 1024,
  keepaliveMs: 20_000,
  idleTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxConnectionsPerAddress: 256,
};

export function resolveLimits(limits: Partial<GatewayLimits> | undefined): GatewayLimits {
  return { ...DEFAULT_LIMITS, ...definedOnly(limits ?? {}) };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
