import type { FastifyPluginAsync } from "fastify";
import type { Registry } from "prom-client";
import type { Log } from "../shared/log.js";
import type { JsonRpcDialect } from "../transports/call-observer.js";
import type { CallGate } from "../transports/jsonrpc-envelope.js";
import type { OpenEndpoint } from "../transports/jsonrpc-endpoint.js";
import type { FrameTap } from "../transports/recording/frame-tap.js";
import type { Principal } from "./auth/tokens.js";
import type { GatewayLimits } from "./limits.js";

/**
 * What the gateway needs of a client dialect to serve it: a WebSocket route, and whatever else the
 * dialect has (Ask: `POST /rpc`, `GET /rpc/events`, a Unix socket, its event counters). The
 * gateway mounts every dialect in its config's list the same way, so it names none of them: the
 * composition layer above (src/cli/dialects/) builds the list, one descriptor per dialect.
 */
export interface GatewayDialect {
  /** The dialect's name: the `dialect` label of its metrics and spans, and of its recordings. */
  readonly name: JsonRpcDialect;
  /** Its WebSocket route (`/` for Codex, whose terminal UI refuses a URL with a path). */
  readonly route: string;
  /**
   * Its JSON-RPC endpoint for one accepted connection of the route, whose front door (token,
   * tenant, limits, drain) it passed: the gateway serves it on the WebSocket (websocket-endpoint.ts).
   */
  open(connection: DialectConnection): OpenEndpoint;
  /** Why a WebSocket that sent a binary message is closed (default: "JSON-RPC requires text messages"). */
  readonly binaryReason?: string;
  /** The dialect's further routes, registered in a scope of their own after its WebSocket route. */
  readonly routes?: FastifyPluginAsync<DialectRoutesContext>;
  /** Response headers of its own a browser client must be able to read (CORS `Access-Control-Expose-Headers`). */
  readonly exposedHeaders?: readonly string[];
  /** Further paths of its own with a metrics route label (Ask: `/rpc/events`); any other path is "other". */
  readonly routeLabels?: readonly string[];
  /** Registers the figures the dialect keeps itself, read at scrape time (Ask: events, interactions). */
  metrics?(registers: Registry[]): void;
}

/** What a WebSocket connection of a dialect gets from the route that accepted it. */
export interface DialectConnection {
  /** The tenant its token names; undefined without tokens. */
  tenant: string | undefined;
  /** Who its token names; undefined without tokens. */
  principal: Principal | undefined;
  /** Its gates: tracing (under the upgrade's trace context), metrics, in-flight limit, drain. */
  gate: CallGate;
  log: Log;
}

/** What the gateway passes a dialect's further routes: the settings of its HTTP surface. */
export interface DialectRoutesContext {
  limits: GatewayLimits;
  maxMessageBytes: number;
  /** Whether the gateway has bearer tokens (clients of a route without a token act for tenant "default" then). */
  authenticated: boolean;
  /** Interval of keepalive comments on event streams. */
  sseHeartbeatMs?: number;
  /** Where client messages are recorded (`serve --record`) and inspected (`--inspector`). */
  recording?: FrameTap;
}
