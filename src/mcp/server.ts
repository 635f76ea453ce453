import { BEFORE_INITIALIZE, type ClientNotifications, type ClientRequests } from "../../generated/mcp-v2025-11-25.js";
import type { BridgeCore } from "../bridge/bridge-core.js";
import { DialectSurface, type Handlers, type NotificationHandlers } from "../bridge/dialect-surface.js";
import { ListedSessions } from "../bridge/listed-sessions.js";
import { WorkspacePolicy, type WorkspaceRoots } from "../bridge/session-workspace.js";
import type { MCP_ERROR_CODES } from "../registry/mcp/index.js";
import type { Log } from "../shared/log.js";
import type { RpcError } from "../shared/rpc-error.js";
import { McpClient } from "./client-state.js";
import type { McpMethodContext, McpServices } from "./context.js";
import { McpElicitations } from "./elicitations.js";
import { MCP_FAILURES, mcpError } from "./errors.js";
import { listedSessionOf } from "./listed-session.js";
import * as lifecycle from "./methods/lifecycle.js";
import * as resources from "./methods/resources.js";
import * as tools from "./methods/tools.js";
import type { McpPeer } from "./peer.js";
import { SessionWatches } from "./session-watches.js";

export type { McpClient } from "./client-state.js";
export type { McpPeer } from "./peer.js";

export interface McpServerOptions {
  /** The bridge core the sessions live on (shared with the other dialects). */
  core: BridgeCore;
  serverVersion: string;
  /** Working directory of sessions started without one. */
  defaultCwd: string;
  /** Roots session working directories must lie in (as for the other dialects); default: unconfined. */
  workspaceRoots?: WorkspaceRoots;
  log?: Log;
}

/** Every request of the registry and its handler: a method missing here does not compile. */
const METHODS: Handlers<McpMethodContext, ClientRequests> = {
  initialize: lifecycle.initialize,
  ping: lifecycle.ping,
  "logging/setLevel": lifecycle.setLevel,
  "tools/list": tools.listTools,
  "tools/call": tools.callTool,
  "resources/list": resources.listResources,
  "resources/templates/list": resources.listTemplates,
  "resources/read": resources.readResource,
  "resources/subscribe": resources.subscribe,
  "resources/unsubscribe": resources.unsubscribe,
};

const NOTIFICATIONS: NotificationHandlers<McpMethodContext, ClientNotifications> = {
  "notifications/initialized": lifecycle.initialized,
  "notifications/cancelled": lifecycle.cancelled,
  "notifications/progress": lifecycle.ignored,
  "notifications/roots/list_changed": lifecycle.ignored,
};

/**
 * The gateway as an MCP server (DESIGN §2): Tau sessions on the bridge core as tools and
 * resources. Transports hand it calls as they come; it checks them against the registry (before
 * initialize only initialize and ping), dispatches, and turns every failure into a JSON-RPC error.
 * Its clients are asked about the sessions' interactions through the core's reverse requesters.
 */
export class McpServer {
  private readonly services: McpServices;
  private readonly surface: DialectSurface<McpMethodContext, ClientRequests, keyof typeof MCP_ERROR_CODES, ClientNotifications>;
  private readonly clients = new Set<McpClient>();
  private readonly stopAsking: () => void;
  private readonly stopListing: () => void;
  private readonly stopHostWatch: Array<() => void>;

  constructor(options: McpServerOptions) {
    // Each needs the other: the watches ask one connection through the elicitations, which ask every watching one.
    const watches: SessionWatches = new SessionWatches((client) => elicitations.of(client), options.core.roles, options.log);
    const elicitations = new McpElicitations(options.core.roles, (sessionId) => watches.askable(sessionId), options.log);
    this.services = {
      core: options.core,
      watches,
      listed: new ListedSessions(options.core, listedSessionOf),
      workspaces: new WorkspacePolicy(options.defaultCwd, options.workspaceRoots),
      serverVersion: options.serverVersion,
      log: options.log,
    };
    // A session of the tenant's began to be served (whichever dialect's client started or opened
    // it) or was closed: its list of resources reads differently.
    this.stopListing = options.core.sessions.onChange(({ tenant }) => {
      for (const client of this.clients) {
        if (client.initialized && !client.peer.closed && client.peer.tenant === tenant) client.peer.notify("notifications/resources/list_changed", {});
      }
    });
    this.stopHostWatch = options.core.hostLinks.flatMap((host, index) => [
      host.upstream.onDisconnected(() => this.logToAll("error", { message: "the gateway lost its connection to a Tau host: its sessions' turns stop and their calls fail until it is back", host: index })),
      host.upstream.onConnected(({ reconnected }) => {
        if (reconnected) this.logToAll("notice", { message: "the gateway is connected to the Tau host again: its sessions go on", host: index });
      }),
    ]);
    this.stopAsking = options.core.reverse.add(elicitations);
    this.surface = new DialectSurface<McpMethodContext, ClientRequests, keyof typeof MCP_ERROR_CODES, ClientNotifications>(
      METHODS,
      {
        dialect: "mcp",
        failures: MCP_FAILURES,
        handshake: {
          initialized: (ctx) => ctx.client.initialized,
          allowed: BEFORE_INITIALIZE,
          refusal: (method) => mcpError("invalid_request", `Invalid Request: ${method} before initialize`),
          beforeLookup: false,
        },
        log: options.log,
      },
      NOTIFICATIONS,
    );
  }

  /** A log message about the gateway itself to every connection (whichever tenant: it names no session). */
  private logToAll(level: "error" | "notice", data: { message: string; host: number }): void {
    for (const client of this.clients) client.log(level, "tau-gateway", data);
  }

  connect(peer: McpPeer): McpClient {
    const client = new McpClient(peer);
    this.clients.add(client);
    return client;
  }

  /** The connection is gone: it watches nothing more; the turns its calls started run on (they belong to their sessions). */
  disconnect(client: McpClient): void {
    this.clients.delete(client);
    client.calls.clear();
    this.services.watches.closeClient(client);
  }

  /** The requests the server answers (its notifications go to `notify`). */
  readonly methods: readonly string[] = Object.keys(METHODS);

  isMethod(method: string): boolean {
    return this.surface.isMethod(method);
  }

  refusal(client: McpClient, method: string): RpcError | undefined {
    return this.surface.refusal({ services: this.services, client }, method);
  }

  /** Runs one request (`requestId`: its JSON-RPC id); resolves with the result or rejects with the MCP RpcError. */
  call(client: McpClient, method: string, params: unknown, requestId?: string | number, signal?: AbortSignal): Promise<unknown> {
    return this.surface.call({ services: this.services, client, requestId, signal }, method, params);
  }

  /** Handles one notification; an unknown or invalid one is ignored, as notifications get no answer. */
  notify(client: McpClient, method: string, params: unknown): void {
    this.surface.notify({ services: this.services, client }, method, params);
  }

  /** Interrupts the turns the connection's tool calls are running (the process is stopping). */
  interruptCalls(client: McpClient): void {
    for (const call of [...client.calls.values()]) call.cancel("the gateway is stopping");
  }

  async close(): Promise<void> {
    for (const client of this.clients) this.interruptCalls(client);
    this.clients.clear();
    this.services.watches.closeAll();
    this.stopAsking();
    this.stopListing();
    for (const stop of this.stopHostWatch) stop();
  }
}
