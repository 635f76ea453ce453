import type { Log } from "../shared/log.js";
import type { TauUpstream } from "../tau/upstream.js";
import { ProtocolValidators } from "../validation/validator.js";
import { AskError, toAskError } from "./ask-errors.js";
import type { BridgeServices, MethodContext, MethodHandlers } from "./context.js";
import type { CommandToolConfig } from "./interactions/index.js";
import * as artifactMethods from "./methods/artifacts.js";
import * as eventMethods from "./methods/events.js";
import * as handshake from "./methods/handshake.js";
import * as interactionMethods from "./methods/interactions.js";
import * as sessionMethods from "./methods/sessions.js";
import * as turnMethods from "./methods/turns.js";
import * as workspaceMethods from "./methods/workspace.js";
import type { AskPeer } from "./peer.js";
import { PeerReverseRequester } from "./reverse-requests.js";
import { knownToolNames } from "./session-create-request.js";
import { SessionFactsReader } from "./session-facts.js";
import { SessionRegistry } from "./session-registry.js";
import { WorkspacePolicy, type WorkspaceRoots } from "./session-workspace.js";
import { Subscriptions } from "./subscriptions.js";

export { AskError } from "./ask-errors.js";
export type { AskPeer } from "./peer.js";
export type { WorkspaceRoots } from "./session-workspace.js";

export interface AskBridgeOptions {
  upstream: TauUpstream;
  defaultCwd: string;
  /** Confine session working directories (default: unconfined). */
  workspaceRoots?: WorkspaceRoots;
  serverVersion: string;
  retention?: number;
  interactionDeadlineMs?: number;
  commandTools?: CommandToolConfig[];
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

/** The same table, looked up by a method name read off the wire (params are validated before a handler runs). */
const BY_NAME: Record<string, (ctx: MethodContext, params: never) => Promise<unknown>> = METHODS;

export const ASK_METHOD_NAMES = Object.keys(METHODS);

/** Figures for the gateway's metrics. */
export interface AskBridgeStats {
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
}

/**
 * The gateway as an Ask host: one shared bridge connection upstream, one hub per session, cursors
 * per client connection. Transports hand it validated-or-not calls; it validates params against the
 * registry, dispatches, and turns every failure into a JSON-RPC error from DESIGN §4.5.
 */
export class AskBridge {
  private readonly services: BridgeServices;
  private readonly schema = ProtocolValidators.shared().get("ask");
  private readonly peers = new Set<AskPeer>();
  private readonly unsubscribe: Array<() => void> = [];

  constructor(private readonly options: AskBridgeOptions) {
    const subscriptions = new Subscriptions();
    const sessions = new SessionRegistry({
      upstream: options.upstream,
      retention: options.retention,
      interactionDeadlineMs: options.interactionDeadlineMs ?? 300_000,
      commandTools: options.commandTools ?? [],
      reverse: new PeerReverseRequester((sessionId) => subscriptions.subscribers(sessionId)),
      log: options.log,
    });
    this.services = {
      upstream: options.upstream,
      sessions,
      subscriptions,
      sessionFacts: new SessionFactsReader({ readSnapshot: (sessionId) => options.upstream.request("session.snapshot", { sessionId }) }),
      workspaces: new WorkspacePolicy(options.defaultCwd, options.workspaceRoots),
      toolNames: knownToolNames(options.commandTools ?? []),
      serverVersion: options.serverVersion,
      startedAt: Date.now(),
    };
  }

  /** Wires the bridge connection's messages and reconnects to the session hubs. */
  start(): void {
    const { upstream, sessions } = this.services;
    this.unsubscribe.push(
      upstream.onMessage((message) => sessions.route(message)),
      upstream.onDisconnected(() => sessions.cancelAllInteractions("the connection to the Tau host was lost")),
      upstream.onConnected(({ reconnected }) => {
        if (reconnected) void sessions.resyncAll();
      }),
    );
  }

  connect(peer: AskPeer): void {
    this.peers.add(peer);
  }

  disconnect(peer: AskPeer): void {
    this.peers.delete(peer);
    this.services.subscriptions.dropPeer(peer);
  }

  isMethod(method: string): boolean {
    return method in BY_NAME;
  }

  /** Runs one call; resolves with the result or rejects with an AskError. */
  async call(peer: AskPeer, method: string, params: unknown): Promise<unknown> {
    const handler = BY_NAME[method];
    if (!handler) throw AskError.of("method_not_found", `Method not found: ${method}`);
    const value = params ?? {};
    const checked = this.schema.params(method, value);
    if (!checked.ok) {
      const first = checked.issues[0]!;
      const field = first.pointer.replace(/^\//, "").replace(/\//g, ".") || "params";
      // A missing field in the Ask host's words; any other problem names the field and what is wrong.
      const message = first.keyword === "required" ? `method ${method} missing required field "${field}"` : `invalid params for ${method}: ${field}: ${first.message}`;
      throw AskError.of("invalid_params", message, { issues: checked.issues });
    }
    const ctx: MethodContext = { services: this.services, peer };
    try {
      return await handler(ctx, value as never);
    } catch (err) {
      const error = toAskError(err);
      if (error.code === -32603) this.options.log?.("error", "ask method failed", { method, error: String(err) });
      throw error;
    }
  }

  get stats(): AskBridgeStats {
    const records = this.services.sessions.all();
    const { retired } = this.services.sessions;
    return {
      eventsEmitted: retired.eventsEmitted + records.reduce((sum, r) => sum + r.hub.log.newestSeq, 0),
      eventsDelivered: this.services.subscriptions.delivered,
      pendingInteractions: records.reduce((sum, r) => sum + r.interactions.list().length, 0),
      snapshotFetches: {
        resync: retired.snapshotFetches + records.reduce((sum, r) => sum + r.hub.snapshotFetches, 0),
        list: this.services.sessionFacts.snapshotReads,
      },
    };
  }

  get sessionCount(): number {
    return this.services.sessions.all().length;
  }

  async close(): Promise<void> {
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.services.sessions.cancelAllInteractions("the gateway is shutting down");
  }
}
