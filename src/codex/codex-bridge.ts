import type { ClientNotifications, ClientRequests } from "../../generated/codex-v2.js";
import type { BridgeCore } from "../bridge/bridge-core.js";
import { WorkspacePolicy, type WorkspaceRoots } from "../bridge/session-workspace.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import { ProtocolValidators } from "../validation/validator.js";
import { codexError, requiresExperimentalApi, toCodexError } from "./codex-errors.js";
import { experimentalFieldUsed } from "./experimental-fields.js";
import type { CodexMethodContext, CodexServices } from "./context.js";
import type { ToolConnectionFactory } from "./dynamic-tools.js";
import * as catalog from "./methods/catalog.js";
import * as handshake from "./methods/handshake.js";
import * as threads from "./methods/threads.js";
import * as turns from "./methods/turns.js";
import type { CodexPeer } from "./peer.js";
import { CodexServerRequests } from "./server-requests.js";
import { ListedSessions } from "../bridge/listed-sessions.js";
import { threadDigestOf } from "./thread-digests.js";
import { CodexThreads } from "./threads.js";

export type { CodexPeer } from "./peer.js";

export interface CodexBridgeOptions {
  /** The bridge core shared with the other dialects (started by its owner). */
  core: BridgeCore;
  /** cwd of threads started without one. */
  defaultCwd: string;
  /** Roots thread working directories must lie in (as for Ask sessions); default: unconfined. */
  workspaceRoots?: WorkspaceRoots;
  serverVersion: string;
  /** Opens an upstream connection advertising a client's dynamic tools. */
  toolConnection: ToolConnectionFactory;
  log?: Log;
}

type Handler<P, R> = (ctx: CodexMethodContext, params: P) => Promise<R>;

/** Every request and client notification the gateway serves, and its handler: the compiler holds this to the registry's method maps. */
const METHODS: { [M in keyof ClientRequests]: Handler<ClientRequests[M]["params"], ClientRequests[M]["result"]> } & {
  [M in keyof ClientNotifications]: Handler<ClientNotifications[M], void>;
} = {
  initialize: handshake.initialize,
  initialized: handshake.initialized,
  "account/read": catalog.accountRead,
  "model/list": catalog.modelList,
  "config/read": catalog.configRead,
  "configRequirements/read": catalog.configRequirementsRead,
  "collaborationMode/list": catalog.collaborationModeList,
  "permissionProfile/list": catalog.permissionProfileList,
  "skills/list": catalog.skillsList,
  "thread/start": threads.threadStart,
  "thread/resume": threads.threadResume,
  "thread/read": threads.threadRead,
  "thread/list": threads.threadList,
  "thread/loaded/list": threads.threadLoadedList,
  "turn/start": turns.turnStart,
  "turn/steer": turns.turnSteer,
  "turn/interrupt": turns.turnInterrupt,
};

export const CODEX_METHOD_NAMES: readonly string[] = Object.keys(METHODS);

/** Methods a connection may call before initialize (the notification that follows it is harmless either way). */
const BEFORE_INITIALIZE = new Set(["initialize", "initialized"]);

/**
 * The gateway as a Codex app-server (protocol v2) on the bridge core: threads are Tau sessions,
 * turns Tau turns, the session's event stream becomes item notifications, and the bridge's
 * interactions become server requests. Transports hand it calls; it checks the connection is
 * initialized, reads a missing `params` as `{}`, validates params against the registry (-32602
 * naming the field), refuses experimental fields to a connection that did not opt in, dispatches, and turns every failure into a JSON-RPC error.
 */
export class CodexBridge {
  private readonly services: CodexServices;
  private readonly schema = ProtocolValidators.shared().get("codex");

  constructor(private readonly options: CodexBridgeOptions) {
    const threads = new CodexThreads({ core: options.core, serverVersion: options.serverVersion, log: options.log });
    this.services = { core: options.core, threads, threadDigests: new ListedSessions(options.core, (snapshot) => threadDigestOf(snapshot, options.serverVersion)), workspaces: new WorkspacePolicy(options.defaultCwd, options.workspaceRoots), serverVersion: options.serverVersion, toolConnection: options.toolConnection, log: options.log };
    options.core.reverse.add(new CodexServerRequests((sessionId) => threads.get(sessionId)));
  }

  isMethod(method: string): boolean {
    return Object.hasOwn(METHODS, method);
  }

  /** The connection went away: its threads stop sending to it, and its dynamic tools close. */
  disconnect(peer: CodexPeer): void {
    this.services.threads.dropPeer(peer);
  }

  /** Runs one call; resolves with the result or rejects with a CodexError. */
  async call(peer: CodexPeer, method: string, params: unknown, cause?: RequestCause): Promise<unknown> {
    if (!this.isMethod(method)) throw codexError("method_not_found", `Method not found: ${method}`);
    if (!peer.client.initialized && !BEFORE_INITIALIZE.has(method)) throw codexError("invalid_request", "Not initialized");
    const value = params ?? {};
    const checked = this.schema.params(method, value);
    if (!checked.ok) {
      const first = checked.issues[0]!;
      const field = first.pointer.replace(/^\//, "").replace(/\//g, ".") || "params";
      throw codexError("invalid_params", `invalid params for ${method}: ${field}: ${first.message}`, { issues: checked.issues });
    }
    const experimental = peer.client.experimentalApi ? undefined : experimentalFieldUsed(method, value);
    if (experimental) throw requiresExperimentalApi(experimental);
    const handler = METHODS[method as keyof typeof METHODS] as Handler<unknown, unknown>;
    try {
      return await handler({ services: this.services, peer, cause }, value);
    } catch (err) {
      const error = toCodexError(err);
      if (error.code === -32603) this.options.log?.("error", "codex method failed", { method, error: String(err) });
      throw error;
    }
  }
}
