import type { ClientToolDefinition } from "../../../generated/tau-v18.js";
import type { BridgeCore } from "../../bridge/bridge-core.js";
import type { CommandToolConfig } from "../../bridge/interactions/index.js";
import type { WorkspaceRoots } from "../../bridge/session-workspace.js";
import type { GatewayDialect } from "../../gateway/dialects.js";
import type { DialectRegistry } from "../../registry/model.js";
import type { Log } from "../../shared/log.js";
import type { TauUpstream } from "../../tau/upstream.js";
import type { JsonRpcDialect } from "../../transports/call-observer.js";
import type { CallGate } from "../../transports/jsonrpc-envelope.js";
import type { FileRecording } from "../../transports/recording/recording-folder.js";
import type { RelayDialect } from "../../relay/relay-dialect.js";
import type { CommandIO } from "../io.js";
import type { bridgeSettings, SettingValues, socketSettings } from "../settings.js";
import type { SettingSpecs, StdioSettingValues } from "./stdio-settings.js";

/**
 * One client dialect, as every part of the CLI that hosts sessions uses it. What `tau-gateway`
 * must know before loading anything of it (its name, its gateway route, its stdio command's name
 * and one-line summary) is its entry in index.ts; the rest is its descriptor, in a file of its own
 * that index.ts loads on demand: the bridge stack builds its surface on the shared core with
 * `createSurface`, `serve` mounts it on the gateway with `gateway`, and its stdio command serves it
 * on stdin/stdout (or relays to a gateway with `--remote`) through the one skeleton in
 * ../stdio-command.ts.
 */
export interface DialectEntry {
  /** Its WebSocket route on the gateway (and the route `--remote` adds to a gateway's base URL). */
  readonly route: string;
  /** `tau-gateway COMMAND`: its stdio command. */
  readonly command: string;
  /** That command's line in `tau-gateway --help`. */
  readonly summary: string;
  /** Loads its descriptor. */
  load(): Promise<AnyDialectDescriptor>;
}

/**
 * `Gateway` is what its gateway side reads of `serve`'s settings (Ask: the `"jsonrpc"` member and
 * the Unix socket), each dialect its own; `void` when it reads none.
 */
export interface DialectDescriptor<Surface, Own extends SettingSpecs, Gateway = void> {
  /**
   * Its registry: every message it has, as data. Its `dialect` is the dialect's name everywhere:
   * the label of its metrics and spans, the dialect of its recordings.
   */
  readonly registry: DialectRegistry<JsonRpcDialect>;
  /** Builds its surface on the bridge core the dialects share. */
  createSurface(context: SurfaceContext): Surface;
  /** Ends what its surface holds (turns it must interrupt while Tau can still hear it), before the core closes. */
  closeSurface?(surface: Surface): Promise<void>;
  /** Reads what its gateway side needs of `serve`'s settings. */
  gatewayOptions?(serve: ServeSettingsView): Gateway;
  /** The gateway's view of it: its WebSocket connections, further routes, metrics. */
  gateway(surface: Surface, mount: { name: JsonRpcDialect; route: string }, options: Gateway): GatewayDialect;
  /** Its stdio command. */
  readonly command: StdioCommand<Surface, Own>;
}

/** What a dialect's surface is built from: the shared core and the settings every dialect may read. */
export interface SurfaceContext {
  core: BridgeCore;
  /** Working directory of sessions created without one. */
  defaultCwd: string;
  workspaceRoots: WorkspaceRoots;
  commandTools: CommandToolConfig[];
  serverVersion: string;
  log: Log;
  /**
   * A connection of its own to the host of `sessionId` that advertises `tools` (Tau takes a
   * connection's tools once), for tools a client brings along (Codex dynamic tools).
   */
  toolConnection(tools: ClientToolDefinition[], sessionId: string): TauUpstream;
}

/** The settings of `serve` a dialect's gateway side may read (serve.ts has them all; a test gives what it sets). */
export type ServeSettingsView = Partial<SettingValues<typeof bridgeSettings & typeof socketSettings>>;

/** A stdio command: its usage, its own settings, the relay it becomes with `--remote`, and how it serves. */
export interface StdioCommand<Surface, Own extends SettingSpecs> {
  readonly usage: string;
  /** Its settings besides those every stdio command has (stdio-settings.ts). */
  readonly settings: Own;
  /** With `--remote`: what the relay must know of the dialect. */
  readonly relay: RelayDialect;
  /**
   * Serves the surface on stdin/stdout (and whatever else the command serves; Ask: a socket)
   * until input ends, stdout goes away or `run.stop` aborts, and resolves with the exit status once
   * the work in flight is answered or its time is up; the skeleton then closes everything. Having
   * said why on stderr, it resolves 1 when it cannot start serving.
   */
  serve(surface: Surface, run: StdioRun<StdioSettingValues<Own>>): Promise<number>;
}

/** What the skeleton hands a stdio command's `serve`. */
export interface StdioRun<Values> {
  settings: Values;
  io: CommandIO;
  log: Log;
  core: BridgeCore;
  /** Tau requests of the dialects (a turn in flight is an open request). */
  upstream: { readonly openRequests: number };
  /** `--record FILE`: every message both ways on stdin/stdout. */
  recording: FileRecording | undefined;
  /**
   * The gates of one connection of the command (create one per connection: the in-flight limit
   * counts its calls), with the drain's gate innermost when the command has one; spans are labelled
   * with the dialect's name.
   */
  gate(drain?: CallGate): CallGate;
  /** Aborts on the first SIGTERM/SIGINT (one during start-up too), the signal as its reason. */
  stop: AbortSignal;
  /** Aborts on a signal that arrives once the command is stopping: stop waiting for work in flight. */
  hurry: AbortSignal;
  /** Says the command is stopping anyway (its input ended): the next signal hurries. */
  stopping(): void;
}

/** A descriptor whose surface and settings are its own business. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDialectDescriptor = DialectDescriptor<any, any, any>;

/** A dialect with its descriptor loaded. */
export interface LoadedDialect extends DialectEntry {
  /** Its registry's dialect. */
  readonly name: JsonRpcDialect;
  readonly descriptor: AnyDialectDescriptor;
}
