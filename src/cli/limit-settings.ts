import { DEFAULT_MAX_MESSAGE_BYTES } from "../gateway/config.js";
import { DEFAULT_LIMITS } from "../gateway/limits.js";
import { envName, integer, type SettingSpec } from "./settings.js";

/** `tau-gateway serve` settings for the limits that protect the gateway (DESIGN §6). */
export const limitSettings = {
  maxMessageBytes: { flag: "max-message-bytes", default: DEFAULT_MAX_MESSAGE_BYTES, parse: integer(1024) },
  maxConnections: { flag: "max-connections", default: DEFAULT_LIMITS.maxConnections, parse: integer(1) },
  maxInflight: { flag: "max-inflight", default: DEFAULT_LIMITS.maxInflight, parse: integer(1) },
  maxBufferedBytes: { flag: "max-buffered-bytes", default: DEFAULT_LIMITS.maxBufferedBytes, parse: integer(1) },
  keepaliveMs: { flag: "keepalive-ms", default: DEFAULT_LIMITS.keepaliveMs, parse: integer(0) },
  idleTimeoutMs: { flag: "idle-timeout-ms", default: DEFAULT_LIMITS.idleTimeoutMs, parse: integer(0) },
  headersTimeoutMs: { flag: "headers-timeout-ms", default: DEFAULT_LIMITS.headersTimeoutMs, parse: integer(0) },
  requestTimeoutMs: { flag: "request-timeout-ms", default: DEFAULT_LIMITS.requestTimeoutMs, parse: integer(0) },
  maxConnectionsPerAddress: { flag: "max-connections-per-address", default: DEFAULT_LIMITS.maxConnectionsPerAddress, parse: integer(0) },
} satisfies Record<string, SettingSpec<unknown>>;

export const LIMIT_USAGE = `  --max-message-bytes N         largest client message (WebSocket message or HTTP body); larger:
                                close 1009 / HTTP 413 (default ${DEFAULT_MAX_MESSAGE_BYTES}) ${envName("max-message-bytes")}
  --max-connections N           open WebSocket connections; more are refused with HTTP 503
                                before the upgrade (default ${DEFAULT_LIMITS.maxConnections}) ${envName("max-connections")}
  --max-inflight N              unanswered requests per connection; more are refused (Ask -32013,
                                Tau busy) (default ${DEFAULT_LIMITS.maxInflight}) ${envName("max-inflight")}
  --max-buffered-bytes N        unread bytes queued for a client before it is disconnected with
                                1013 (default ${DEFAULT_LIMITS.maxBufferedBytes}) ${envName("max-buffered-bytes")}
  --keepalive-ms MS             WebSocket ping interval; a peer that has not answered a ping by
                                the next is terminated; 0 = off (default ${DEFAULT_LIMITS.keepaliveMs}) ${envName("keepalive-ms")}
  --idle-timeout-ms MS          a connection with no request in progress that sends nothing for MS
                                is closed; 0 = never (default ${DEFAULT_LIMITS.idleTimeoutMs}) ${envName("idle-timeout-ms")}
  --headers-timeout-ms MS       time to send a request's headers (WebSocket upgrades too); then
                                408 and close; 0 = never (default ${DEFAULT_LIMITS.headersTimeoutMs}) ${envName("headers-timeout-ms")}
  --request-timeout-ms MS       time to send a whole request, body included; then 408 and close;
                                0 = never (default ${DEFAULT_LIMITS.requestTimeoutMs}) ${envName("request-timeout-ms")}
  --max-connections-per-address N
                                open TCP connections from one client address; more are closed at
                                once; --trust-proxy peers are exempt; 0 = no cap
                                (default ${DEFAULT_LIMITS.maxConnectionsPerAddress}) ${envName("max-connections-per-address")}`;

/** The limits of a command that serves one client on stdin/stdout (acp, app-server). */
export const STDIO_LIMIT_USAGE = `  --max-inflight N              unanswered requests at once; more are refused with -32013
                                (default ${DEFAULT_LIMITS.maxInflight}) ${envName("max-inflight")}
  --max-message-bytes N         longest line; a longer one is skipped (default ${DEFAULT_MAX_MESSAGE_BYTES}) ${envName("max-message-bytes")}`;
