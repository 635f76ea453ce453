import { ListedSessions } from "../bridge/listed-sessions.js";
import { listedSessionOf } from "./listed-session.js";
import { BEFORE_INITIALIZE, type ClientNotifications, type ClientRequests } from "../../generated/acp-v1.js";
import type { BridgeCore } from "../bridge/bridge-core.js";
import { DialectSurface, type Handlers, type NotificationHandlers } from "../bridge/dialect-surface.js";
import { ASK_USER_TOOL, SUBMIT_PLAN_TOOL, type CommandToolConfig } from "../bridge/interactions/index.js";
import { WorkspacePolicy, type WorkspaceRoots } from "../bridge/session-workspace.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { RpcError } from "../shared/rpc-error.js";
import { AcpClient } from "./client-state.js";
import type { AcpMethodContext, AcpServices } from "./context.js";
import type { ACP_ERROR_CODES } from "../registry/acp/index.js";
import { ACP_FAILURES, acpError } from "./errors.js";
import * as handshake from "./methods/handshake.js";
import * as sessions from "./methods/sessions.js";
import * as turns from "./methods/turns.js";
import type { AcpPeer } from "./peer.js";
import { SessionLinks } from "./session-links.js";

export type { AcpClient } from "./client-state.js";
export type { AcpPeer } from "./peer.js";

export interface AcpAgentOptions {
  /** The bridge core the sessions live on (shared with the other dialects). */
  core: BridgeCore;
  serverVersion: string;
  /** The operator's command tools (their names decide how their calls show). */
  commandTools?: CommandToolConfig[];
  /** Roots session working directories must lie in (as for Ask sessions); default: unconfined. */
  workspaceRoots?: WorkspaceRoots;
  log?: Log;
}

/** Every request of the registry and its handler: a method missing here does not compile. */
const METHODS: Handlers<AcpMethodContext, ClientRequests> = {
  initialize: handshake.initialize,
  authenticate: handshake.authenticate,
  "session/new": sessions.newSession,
  "session/load": sessions.loadSession,
  "session/list": sessions.listSessions,
  "session/resume": sessions.resumeSession,
  "session/close": sessions.closeSession,
  "session/set_mode": sessions.setMode,
  "session/prompt": turns.prompt,
};

const NOTIFICATIONS: NotificationHandlers<AcpMethodContext, ClientNotifications> = {
  "session/cancel": turns.cancel,
};

/**
 * The gateway as an ACP agent (DESIGN §2): sessions on the bridge core, each connection linked to
 * the sessions it uses. Transports hand it calls as they come; it checks them against the
 * registry (before initialize, only initialize), dispatches, and turns every failure into a
 * JSON-RPC error.
 */
export class AcpAgent {
  private readonly services: AcpServices;
  private readonly surface: DialectSurface<AcpMethodContext, ClientRequests, keyof typeof ACP_ERROR_CODES, ClientNotifications>;
  private readonly clients = new Set<AcpClient>();

  constructor(private readonly options: AcpAgentOptions) {
    const commandTools = new Set((options.commandTools ?? []).map((t) => t.name));
    const links = new SessionLinks({
      upstream: options.core.hosts,
      commandTools,
      gatedTools: new Set([...commandTools, ASK_USER_TOOL, SUBMIT_PLAN_TOOL]),
      roles: options.core.roles,
      log: options.log,
    });
    this.services = { core: options.core, links, listed: new ListedSessions(options.core, listedSessionOf),
      // An ACP cwd is always absolute: the policy's default directory is never used.
      workspaces: new WorkspacePolicy("/", options.workspaceRoots),
      serverVersion: options.serverVersion, log: options.log };
    this.surface = new DialectSurface<AcpMethodContext, ClientRequests, keyof typeof ACP_ERROR_CODES, ClientNotifications>(
      METHODS,
      {
        dialect: "acp",
        failures: ACP_FAILURES,
        // Before initialize, every request but initialize is an invalid request, an unknown method
        // included (protocol §1, as the SDK's agent answers it).
        handshake: {
          initialized: (ctx) => ctx.client.initialized,
          allowed: BEFORE_INITIALIZE,
          refusal: (method) => acpError("invalid_request", `Invalid Request: ${method} before initialize`),
          beforeLookup: true,
        },
        // A prompt whose turn failed is answered -32603 with Tau's message: an outcome, not a fault.
        logsInternalError: (method) => method !== "session/prompt",
        log: options.log,
      },
      NOTIFICATIONS,
    );
  }

  connect(peer: AcpPeer): AcpClient {
    const client = new AcpClient(peer);
    this.clients.add(client);
    return client;
  }

  /**
   * The connection is gone: its sessions stop streaming to it. The turns it started run on — a
   * turn belongs to its session, not to a connection (the other clients of the session see it
   * through, and this editor when it loads the session again); the interaction deadline and the
   * gateway's drain bound it as they bound every turn.
   */
  async disconnect(client: AcpClient): Promise<void> {
    this.clients.delete(client);
    await this.services.links.closeClient(client);
  }

  /** The requests the agent answers (its notifications go to `notify`). */
  readonly methods: readonly string[] = Object.keys(METHODS);

  /**
   * Shutting down: interrupts the turns the connection's prompts are running, and within `budgetMs`
   * each ends (Tau's report, else the gateway's: bridge/turn-endings.ts), so every prompt is
   * answered `cancelled`.
   */
  async interruptTurns(client: AcpClient, budgetMs: number): Promise<void> {
    const prompting = this.services.links.ofClient(client).filter((link) => link.markCancelled());
    if (prompting.length === 0) return;
    await this.services.core.endRunningTurns(budgetMs, prompting.map((link) => link.sessionId));
  }

  isMethod(method: string): boolean {
    return this.surface.isMethod(method);
  }

  /** Why a request is refused whatever its method (before initialize, every request but initialize), or undefined. */
  refusal(client: AcpClient, method: string): RpcError | undefined {
    return this.surface.refusal({ services: this.services, client }, method);
  }

  /** Runs one request; resolves with the result or rejects with the ACP RpcError. */
  call(client: AcpClient, method: string, params: unknown, cause?: RequestCause, signal?: AbortSignal): Promise<unknown> {
    return this.surface.call({ services: this.services, client, cause, signal }, method, params);
  }

  /** Handles one notification; an unknown or invalid one is ignored, as notifications get no answer. */
  notify(client: AcpClient, method: string, params: unknown): void {
    this.surface.notify({ services: this.services, client }, method, params);
  }

  /** Shutting down: turns of every connection still running are interrupted now. */
  async close(): Promise<void> {
    this.clients.clear();
    await this.services.links.closeAll();
  }
}
