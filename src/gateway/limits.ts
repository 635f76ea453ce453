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
}

export const DEFAULT_LIMITS: GatewayLimits = {
  maxConnections: 1024,
  maxInflight: 64,
  maxBufferedBytes: 8 * 1024 * 1024,
  keepaliveMs: 20_000,
};

export function resolveLimits(limits: Partial<GatewayLimits> | undefined): GatewayLimits {
  return { ...DEFAULT_LIMITS, ...definedOnly(limits ?? {}) };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
