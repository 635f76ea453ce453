import type { ClientRequests } from "../../generated/ask-v1.0.js";
import { BridgeCore, type BridgeCoreOptions } from "../bridge/bridge-core.js";
import { DialectSurface, invalidParamsFor } from "../bridge/dialect-surface.js";
import type { ASK_ERROR_CODES } from "../registry/ask/index.js";
import type { Log } from "../shared/log.js";
import { ASK_FAILURES } from "./ask-errors.js";
import type { AskServices, MethodContext, MethodHandlers } from "./context.js";
import * as artifactMethods from "./methods/artifacts.js";
import * as eventMethods from "./methods/events.js";
import * as handshake from "./methods/handshake.js";
import * as interactionMethods from "./methods/interactions.js";
import * as roleMethods from "./methods/roles.js";
import * as sessionMethods from "./methods/sessions.js";
import * as turnMethods from "./methods/turns.js";
import * as workspaceMethods from "./methods/workspace.js";
import type { AskPeer } from "./peer.js";
import { PeerReverseRequester } from "./reverse-requests.js";
import { knownToolNames } from "./session-create-request.js";
import { SessionFactsReader } from "./session-facts.js";
import { WorkspacePolicy, type WorkspaceRoots } from "../bridge/session-workspace.js";
import { Subscriptions } from "./subscriptions.js";

export type { AskPeer } from "./peer.js";
export type { WorkspaceRoots } from "../bridge/session-workspace.js";

/** The Ask surface on a bridge core shared with other dialects, or on one of its own made from the core's options. */
export type AskSurfaceOptions = AskSurfaceSettings & ({ core: BridgeCore } | BridgeCoreOptions);

export interface AskSurfaceSettings {
  defaultCwd: string;
  /** Confine session working directories (default: unconfined). */
  workspaceRoots?: WorkspaceRoots;
  serverVersion: string;
  log?: Log;
}

/** Every Ask method of the registry and the handler that implements it. */
const METHODS = {
  ping: handshake.ping,
  initialize: handshake.initialize,
  "session/create": sessionMethods.create,
  "session/list": sessionMethods.list,
  "session/resume": sessionMethods.resume,
  "session/subscribe": eventMethods.subscribe,
  "session/events": eventMethods.events,
  "session/send": turnMethods.send,
  "session/abort": turnMethods.abort,
  "session/close": sessionMethods.close,
  "session/setRole": roleMethods.setRole,
  "session/roles": roleMethods.list,
  "session/artifacts": artifactMethods.artifacts,
  "session/artifact/get": artifactMethods.artifactGet,
  "interaction/list": interactionMethods.list,
  "interaction/approve": interactionMethods.approve,
  "interaction/reject": interactionMethods.reject,
  "interaction/approve-all": interactionMethods.approveAll,
  "interaction/reject-all": interactionMethods.rejectAll,
  "interaction/respond": interactionMethods.respond,
  "interaction/requestPermission": interactionMethods.permissionQuery,
  "plan/approve": interactionMethods.planApprove,
  "plan/reject": interactionMethods.planReject,
  "workspace/readState": workspaceMethods.readState,
} satisfies MethodHandlers;

export const ASK_METHOD_NAMES = Object.keys(METHODS);

/** Figures for the gateway's metrics. */
export interface AskSurfaceStats {
  /** Events appended to session logs (each log's seq counts its events; records are kept for good). */
  eventsEmitted: number;
  /** Events sent to subscribed connections. */
  eventsDelivered: number;
  /** Approvals and user-input requests waiting for an answer. */
  pendingInteractions: number;
  /**
   * `session.snapshot` requests sent upstream: `resync` after deltas that did not apply, `list`
   * to learn what session/list shows of sessions the gateway has not opened.
   */
  snapshotFetches: { resync: number; list: number };
  /** Subscriptions after a cursor: continued exactly (recovered), or told the history was lost (reset: -32602 or a new epoch). */
  resumes: { recovered: number; reset: number };
}

/**
 * The gateway as an Ask host: one shared bridge connection upstream, one hub per session, cursors
 * per client connection. Transports hand it validated-or-not calls; it validates params against the
 * registry, dispatches, and turns every failure into a JSON-RPC error from DESIGN §4.5.
 */
export class AskSurface {
  private readonly services: AskServices;
  private readonly surface: DialectSurface<MethodContext, ClientRequests, keyof typeof ASK_ERROR_CODES>;
  private readonly peers = new Set<AskPeer>();
  private readonly core: BridgeCore;
  /** Made here rather than shared: closing the surface closes it. */
  private readonly ownsCore: boolean;
  private readonly stopAsking: () => void;

  constructor(options: AskSurfaceOptions) {
    this.ownsCore = !("core" in options);
    this.core = "core" in options ? options.core : new BridgeCore(options);
    const { hosts: upstream, sessions, commandTools } = this.core;
    const subscriptions = new Subscriptions();
    this.stopAsking = this.core.reverse.add(new PeerReverseRequester((sessionId) => subscriptions.subscribers(sessionId), this.core.roles, options.log));
    this.surface = new DialectSurface<MethodContext, ClientRequests, keyof typeof ASK_ERROR_CODES>(METHODS, {
      dialect: "ask",
      failures: ASK_FAILURES,
      // A missing field in the Ask host's words; any other problem names the field and what is wrong.
      invalidParams: (issue) => (issue.keyword === "required" ? `method ${issue.method} missing required field "${issue.field}"` : invalidParamsFor(issue)),
      log: options.log,
    });
    this.services = {
      core: this.core,
      upstream,
      sessions,
      subscriptions,
      sessionFacts: new SessionFactsReader({ readSnapshot: (sessionId) => upstream.request("session.snapshot", { sessionId }) }),
      workspaces: new WorkspacePolicy(options.defaultCwd, options.workspaceRoots),
      toolNames: knownToolNames(commandTools),
      serverVersion: options.serverVersion,
      startedAt: this.core.startedAt,
    };
  }

  /** Starts the bridge core (a shared one is started once, by whichever surface comes first). */
  start(): void {
    this.core.start();
  }

  connect(peer: AskPeer): void {
    this.peers.add(peer);
  }

  disconnect(peer: AskPeer): void {
    this.peers.delete(peer);
    this.services.subscriptions.dropPeer(peer);
  }

  isMethod(method: string): boolean {
    return this.surface.isMethod(method);
  }

  /** Runs one call; resolves with the result or rejects with the Ask RpcError. */
  call(peer: AskPeer, method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    return this.surface.call({ services: this.services, peer, signal }, method, params);
  }

  get stats(): AskSurfaceStats {
    const records = this.services.sessions.all();
    const { retired } = this.services.sessions;
    return {
      eventsEmitted: retired.eventsEmitted + records.reduce((sum, r) => sum + r.hub.log.newestSeq, 0),
      eventsDelivered: this.services.subscriptions.delivered,
      pendingInteractions: this.core.pendingInteractions,
      snapshotFetches: {
        resync: retired.snapshotFetches + records.reduce((sum, r) => sum + r.hub.snapshotFetches, 0),
        list: this.services.sessionFacts.snapshotReads,
      },
      resumes: { ...this.services.sessions.resumes },
    };
  }

  get sessionCount(): number {
    return this.services.sessions.all().length;
  }

  /** Closes the core too when it is the surface's own; a shared core is its owner's to close. */
  async close(): Promise<void> {
    this.stopAsking();
    if (this.ownsCore) await this.core.close();
  }
}
