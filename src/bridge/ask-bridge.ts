import type { Log } from "../shared/log.js";
import type { TauUpstream } from "../tau/upstream.js";
import { ProtocolValidators } from "../validation/validator.js";
import { AskError, toAskError } from "./ask-errors.js";
import { BridgeCore } from "./bridge-core.js";
import type { BridgeServices, MethodContext, MethodHandler } from "./context.js";
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
import { Subscriptions } from "./subscriptions.js";

export { AskError } from "./ask-errors.js";
export type { AskPeer } from "./peer.js";

export interface AskBridgeOptions {
  upstream: TauUpstream;
  /** The bridge core shared with the other dialects; without it the bridge makes its own from these options. */
  core?: BridgeCore;
  defaultCwd: string;
  serverVersion: string;
  retention?: number;
  interactionDeadlineMs?: number;
  commandTools?: CommandToolConfig[];
  log?: Log;
}

/** Every Ask method and the handler that implements it (the registry lists the same 21). */
const METHODS: Record<string, MethodHandler> = {
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
  "plan/approve": interactionMethods.planApprove,
  "plan/reject": interactionMethods.planReject,
  "workspace/readState": workspaceMethods.readState,
};

export const ASK_METHOD_NAMES = Object.keys(METHODS);

/** Figures for the gateway's metrics. */
export interface AskBridgeStats {
  /** Events appended to session logs (each log's seq counts its events; records are kept for good). */
  eventsEmitted: number;
  /** Events sent to subscribed connections. */
  eventsDelivered: number;
  /** Approvals and user-input requests waiting for an answer. */
  pendingInteractions: number;
}

/**
 * The gateway as an Ask host: one shared bridge connection upstream, one hub per session, cursors
 * per client connection. Transports hand it validated-or-not calls; it validates params against the
 * registry, dispatches, and turns every failure into a JSON-RPC error from DESIGN §4.5.
 */
export class AskBridge {
  private readonly services: BridgeServices;
  private readonly core: BridgeCore;
  /** The core was made here (no shared one was given), so closing the bridge closes it. */
  private readonly ownsCore: boolean;
  private readonly schema = ProtocolValidators.shared().get("ask");
  private readonly peers = new Set<AskPeer>();

  constructor(private readonly options: AskBridgeOptions) {
    this.ownsCore = options.core === undefined;
    this.core = options.core ?? new BridgeCore(options);
    const subscriptions = new Subscriptions();
    this.core.reverse.add(new PeerReverseRequester((sessionId) => subscriptions.subscribers(sessionId)));
    this.services = {
      core: this.core,
      upstream: this.core.upstream,
      sessions: this.core.sessions,
      subscriptions,
      defaultCwd: options.defaultCwd,
      serverVersion: options.serverVersion,
      startedAt: this.core.startedAt,
    };
  }

  /** Wires the bridge connection's messages and reconnects to the session hubs (through the core). */
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
    return method in METHODS;
  }

  /** Runs one call; resolves with the result or rejects with an AskError. */
  async call(peer: AskPeer, method: string, params: unknown): Promise<unknown> {
    const handler = METHODS[method];
    if (!handler) throw AskError.of("method_not_found", `Method not found: ${method}`);
    const value = params ?? {};
    const checked = this.schema.params(method, value);
    if (!checked.ok) {
      const first = checked.issues[0]!;
      const field = first.pointer.replace(/^\//, "").replace(/\//g, ".") || "params";
      throw AskError.of("invalid_params", `invalid params for ${method}: ${field}: ${first.message}`, { issues: checked.issues });
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
    return {
      eventsEmitted: records.reduce((sum, r) => sum + r.hub.log.newestSeq, 0),
      eventsDelivered: this.services.subscriptions.delivered,
      pendingInteractions: this.core.pendingInteractions,
    };
  }

  get sessionCount(): number {
    return this.services.sessions.all().filter((r) => !r.closed).length;
  }

  /** Closes the core too when it is the bridge's own; a shared core is its owner's to close. */
  async close(): Promise<void> {
    if (this.ownsCore) this.core.close();
  }
}
