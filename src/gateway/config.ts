import type { BridgeCore } from "../bridge/bridge-core.js";
import type { SessionReceiptsSource } from "./routes/receipts.js";
import type { GatewayStore } from "../store/index.js";
import type { HostAllowlist } from "./auth/hosts.js";
import type { OriginAllowlist } from "./auth/origins.js";
import type { TokenRegistry } from "./auth/tokens.js";
import type { GatewayDialect } from "./dialects.js";
import type { GatewayLimits } from "./limits.js";
import type { RoleAdministration } from "./routes/session-roles.js";
import type { GatewayUpstream } from "./services.js";
import type { RecordingFolder } from "../transports/recording/recording-folder.js";
import type { InspectorHub } from "./inspector/inspector-hub.js";
import type { InspectedSessions } from "./inspector/session-view.js";

/**
 * Everything `buildGateway` needs: the services it fronts, already built and started (their owner
 * closes them after the gateway), and the settings of its HTTP surface. The CLI builds it from
 * flags and environment variables.
 */
export interface GatewayConfig {
  /** Where `/tau` clients are relayed; every client gets its own upstream connection there. */
  tauUpstream: { url: string; token?: string; connectTimeoutMs?: number };
  /** The gateway's own long-lived upstream connections (a bridge connection per Tau host); `/readyz` reports on them. */
  upstream: GatewayUpstream;
  /** What gateway replicas share (absent: nothing, as with `--store memory`); `/readyz` and `/metrics` report on it. */
  store?: GatewayStore;
  /**
   * The client dialects served, each on its WebSocket route and its further routes (the CLI builds
   * the list from src/cli/dialects/); a dialect not in it has no route. Absent: only `/tau`.
   */
  dialects?: readonly GatewayDialect[];
  /** Interval of `: keepalive` comments on event streams (`GET /rpc/events`, the inspector's feed). Default 15000. */
  sseHeartbeatMs?: number;
  /** pino options; false (the default) logs nothing. */
  logger?: GatewayLoggerOptions | false;
  /** Largest message accepted from clients (WebSocket message or HTTP body), in bytes. Default 32 MiB. */
  maxMessageBytes?: number;
  /** Connection, in-flight, send-buffer and keepalive limits (see limits.ts for the defaults). */
  limits?: Partial<GatewayLimits>;
  /** How long work in flight gets to finish once `app.drain.drain()` starts. Default DEFAULT_DRAIN_TIMEOUT_MS (drain.ts). */
  drainTimeoutMs?: number;
  /** The bridge core the dialects share: turns still running at the drain deadline are ended through it (absent: they are left running). */
  turns?: Pick<BridgeCore, "endRunningTurns">;
  /** The bridge core whose sessions' roles `/sessions/:id/roles` administers (absent, or without tokens: no such route). */
  roles?: RoleAdministration;
  /** Bearer tokens and their tenants, checked on every route but /healthz and /readyz; absent = no authentication and no tenants. */
  tokens?: TokenRegistry;
  /** Browser origins allowed for WebSocket upgrades and CORS (`*` = any); requests without Origin always pass. Default none. */
  allowedOrigins?: OriginAllowlist;
  /**
   * Without tokens: the host names requests may name in `Host` (any IP address passes too), so a
   * DNS-rebinding page cannot use the gateway; `*` = any. Ignored with tokens. Default: the loopback names.
   */
  allowedHosts?: HostAllowlist;
  /** Whose X-Forwarded-For is believed (Fastify's trustProxy): every peer (true) or these proxy addresses/CIDRs. Default false. */
  trustProxy?: boolean | string[];
  /** Records every client WebSocket's messages here (`serve --record`); absent: nothing is recorded. */
  recording?: RecordingFolder;
  /** The live inspector (`serve --inspector`): fed every client frame, served at /inspector; absent: no such routes. */
  inspector?: InspectorConfig;
  /** The sessions' receipts, read at `GET /sessions/:id/receipts`; absent: no such route. */
  receipts?: SessionReceiptsSource;
}

export interface InspectorConfig {
  /** Where the frames go (built by the caller, which may read it too). */
  hub: InspectorHub;
  /** The address the gateway listens on: the Host header may name it (wildcards excepted). */
  listenHost: string;
  /** Other host names the Host header may carry (the name a proxy or an SSH tunnel uses). */
  hosts?: readonly string[];
  /** The bridge core's sessions: the page's session timelines and approvals (absent: only connections and frames). */
  sessions?: InspectedSessions;
  /** The sessions' receipts: the approvals panel shows them, live, to whom may read them (routes/receipts.ts); absent: not shown. */
  receipts?: SessionReceiptsSource;
}

export interface GatewayLoggerOptions {
  level: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** Where JSON log lines go (e.g. process.stderr). Default stdout. */
  stream?: NodeJS.WritableStream;
}

/** Room for Tau's largest request, `session.exec` with 16 MiB of stdin (base64: 4/3 of it), plus its envelope. */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
