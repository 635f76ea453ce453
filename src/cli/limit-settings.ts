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
                                the next is terminated; 0 = off (default ${DEFAULT_LIMITS.keepaliveMs}) ${envName("keepalive-ms")}`;

/** The limits of a command that serves one client on stdin/stdout (acp, app-server). */
export const STDIO_LIMIT_USAGE = `  --max-inflight N              unanswered requests at once; more are refused with -32013
                                (default ${DEFAULT_LIMITS.maxInflight}) ${envName("max-inflight")}
  --max-message-bytes N         longest line; a longer one is skipped (default ${DEFAULT_MAX_MESSAGE_BYTES}) ${envName("max-message-bytes")}`;
