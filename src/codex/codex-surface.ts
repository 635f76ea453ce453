import { BEFORE_INITIALIZE, EXPERIMENTAL_FIELDS, EXPERIMENTAL_METHODS, type ClientNotifications, type ClientRequests } from "../../generated/codex-v2.js";
import type { BridgeCore } from "../bridge/bridge-core.js";
import { DialectSurface, type Handlers, type NotificationsAsCalls } from "../bridge/dialect-surface.js";
import { WorkspacePolicy, type WorkspaceRoots } from "../bridge/session-workspace.js";
import type { CODEX_ERROR_CODES } from "../registry/codex/index.js";
import type { Log } from "../shared/log.js";
import type { RequestCause } from "../shared/request-cause.js";
import type { RpcError } from "../shared/rpc-error.js";
import { CODEX_FAILURES, codexError, requiresExperimentalApi } from "./codex-errors.js";
import type { CodexMethodContext, CodexServices } from "./context.js";
import type { ToolConnectionFactory } from "./dynamic-tools.js";
import { dynamicToolsOverBounds } from "./dynamic-tool-bounds.js";
import { ToolConnections } from "./tool-connections.js";
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

export interface CodexSurfaceOptions {
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

/** Client requests and notifications alike: Codex's transport runs a notification as a call whose answer is dropped. */
type CodexCalls = ClientRequests & NotificationsAsCalls<ClientNotifications>;

/** Every request and client notification the gateway serves, and its handler: the compiler holds this to the registry's method maps. */
const METHODS: Handlers<CodexMethodContext, CodexCalls> = {
  initialize: handshake.initialize,
  initialized: handshake.initialized,
  "account/read": catalog.accountRead,
  "model/list": catalog.modelList,
  "config/read": catalog.configRead,
  "configRequirements/read": catalog.configRequirementsRead,
  "collaborationMode/list": catalog.collaborationModeList,
  "permissionProfile/list": catalog.permissionProfileList,
  "skills/list": catalog.skillsList,
  "hooks/list": catalog.hooksList,
  "plugin/installed": catalog.pluginInstalled,
  "account/bedrock/checkGovCloudRequirements": catalog.bedrockCheckGovCloudRequirements,
  "thread/start": threads.threadStart,
  "thread/resume": threads.threadResume,
  "thread/read": threads.threadRead,
  "thread/list": threads.threadList,
  "thread/turns/list": threads.threadTurnsList,
  "thread/loaded/list": threads.threadLoadedList,
  "turn/start": turns.turnStart,
  "turn/steer": turns.turnSteer,
  "turn/interrupt": turns.turnInterrupt,
};

export const CODEX_METHOD_NAMES: readonly string[] = Object.keys(METHODS);

/**
 * What a connection that did not set capabilities.experimentalApi may not use (the registry's
 * experimental methods and params fields; null counts as no value), as Codex names it.
 */
function experimentalUse(method: Extract<keyof CodexCalls, string>, params: object): string | undefined {
  return method !== "initialized" && EXPERIMENTAL_METHODS.has(method) ? method : experimentalFieldUsed(method, params);
}

/**
 * The first experimental params field (the registry's `experimentalFields` of the method) `params`
 * gives a value, as Codex names it (`thread/start.dynamicTools`); null counts as no value.
 */
export function experimentalFieldUsed(method: string, params: object): string | undefined {
  const fields: readonly string[] = Object.hasOwn(EXPERIMENTAL_FIELDS, method) ? EXPERIMENTAL_FIELDS[method as keyof typeof EXPERIMENTAL_FIELDS]! : [];
  const values = params as Record<string, unknown>;
  const field = fields.find((name) => values[name] !== undefined && values[name] !== null);
  return field === undefined ? undefined : `${method}.${field}`;
}

/**
 * The gateway as a Codex app-server (protocol v2) on the bridge core: threads are Tau sessions,
 * turns Tau turns, the session's event stream becomes item notifications, and the core's
 * interactions become server requests. Transports hand it calls; it checks the connection is
 * initialized, reads a missing `params` as `{}`, refuses dynamic tools past their bounds before any
 * other work, validates params against the registry (-32602
 * naming the field), refuses experimental fields to a connection that did not opt in, dispatches, and turns every failure into a JSON-RPC error.
 */
export class CodexSurface {
  private readonly services: CodexServices;
  private readonly surface: DialectSurface<CodexMethodContext, CodexCalls, keyof typeof CODEX_ERROR_CODES>;

  constructor(options: CodexSurfaceOptions) {
    const threads = new CodexThreads({ core: options.core, serverVersion: options.serverVersion, log: options.log });
    this.services = { core: options.core, threads, threadDigests: new ListedSessions(options.core, (snapshot) => threadDigestOf(snapshot, options.serverVersion)), workspaces: new WorkspacePolicy(options.defaultCwd, options.workspaceRoots), serverVersion: options.serverVersion, toolConnections: new ToolConnections(options.toolConnection, (sessionId) => options.core.hosts.knownHost(sessionId)?.url ?? ""), log: options.log };
    this.surface = new DialectSurface<CodexMethodContext, CodexCalls, keyof typeof CODEX_ERROR_CODES>(METHODS, {
      dialect: "codex",
      failures: CODEX_FAILURES,
      handshake: {
        initialized: (ctx) => ctx.peer.client.initialized,
        allowed: BEFORE_INITIALIZE,
        refusal: () => codexError("invalid_request", "Not initialized"),
        beforeLookup: false,
      },
      bound: (method, params) => (method === "thread/start" ? dynamicToolsOverBounds(params) : undefined),
      admit: (ctx, method, params): RpcError | undefined => {
        const used = ctx.peer.client.experimentalApi ? undefined : experimentalUse(method, params);
        return used === undefined ? undefined : requiresExperimentalApi(used);
      },
      log: options.log,
    });
    options.core.reverse.add(new CodexServerRequests((sessionId) => threads.get(sessionId), options.core.roles));
  }

  isMethod(method: string): boolean {
    return this.surface.isMethod(method);
  }

  /** The connection went away: its threads stop sending to it, and its dynamic tools close. */
  disconnect(peer: CodexPeer): void {
    this.services.threads.dropPeer(peer);
  }

  /** Runs one call; resolves with the result or rejects with the Codex RpcError. */
  call(peer: CodexPeer, method: string, params: unknown, cause?: RequestCause, signal?: AbortSignal): Promise<unknown> {
    return this.surface.call({ services: this.services, peer, cause, signal }, method, params);
  }
}
