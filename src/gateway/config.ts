import type { FastifyRequest } from "fastify";
import type WebSocket from "ws";
import type { TauUpstream } from "../tau/upstream.js";

/** Everything `buildGateway` needs; the CLI builds it from flags and environment variables. */
export interface GatewayConfig {
  /** Where `/tau` clients are relayed; every client gets its own upstream connection there. */
  tauUpstream: { url: string; token?: string; connectTimeoutMs?: number };
  /** The gateway's own long-lived upstream connection (the bridge connection); `/readyz` reports on it. */
  upstream: TauUpstream;
  /** Serves one Ask JSON-RPC WebSocket on `/rpc`; without it the route does not exist. */
  askRoute?: (socket: WebSocket, request: FastifyRequest) => void;
  /** pino options; false (the default) logs nothing. */
  logger?: GatewayLoggerOptions | false;
  /** Largest WebSocket message accepted from clients, in bytes. Default 100 MiB (the `ws` default Tau runs with). */
  maxMessageBytes?: number;
}

export interface GatewayLoggerOptions {
  level: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** Where JSON log lines go (e.g. process.stderr). Default stdout. */
  stream?: NodeJS.WritableStream;
}

export const DEFAULT_MAX_MESSAGE_BYTES = 100 * 1024 * 1024;
