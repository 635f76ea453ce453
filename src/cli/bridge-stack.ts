import { AcpAgent } from "../acp/agent.js";
import { AskBridge } from "../bridge/ask-bridge.js";
import { BridgeCore } from "../bridge/bridge-core.js";
import { DEADLINE_GRACE_MS, gatewayClientTools, type CommandToolConfig } from "../bridge/interactions/index.js";
import { CodexBridge } from "../codex/codex-bridge.js";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "../gateway/drain.js";
import { gatewayVersion } from "../gateway/version.js";
import { startTauHost, type RunningTauHost } from "../host/index.js";
import type { Log } from "../shared/log.js";
import { openStore, type GatewayStore } from "../store/index.js";
import { TauUpstream } from "../tau/upstream.js";

export interface BridgeStackSettings {
  /** `embedded` or a ws:// URL. */
  upstream: string;
  upstreamToken?: string;
  defaultCwd: string;
  /** Roots confining session working directories (empty or absent: unconfined). */
  workspaceRoots?: string[];
  /** Tenants' own roots (from the tokens file), in place of `workspaceRoots`. */
  tenantWorkspaceRoots?: ReadonlyMap<string, readonly string[]>;
  eventRetention: number;
  interactionTimeoutMs: number;
  /** How long a turn may run on after its client went away (the drain timeout; default 10000). */
  drainTimeout?: number;
  /** `memory` (default) or `redis://HOST:PORT[/DB]`: what gateway replicas share. */
  store?: string;
  /** Redis store: host lease time to live. */
  storeLeaseMs?: number;
  /** Redis store: events older than this are dropped. */
  eventMaxAgeMs?: number;
}

/** A Tau host's name in the store: its URL without credentials or query, the same on every replica. */
export function hostKeyOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
}

/**
 * What every command that hosts sessions runs: the upstream Tau host (the embedded one by
 * default), the bridge connection to it, the bridge core every dialect shares, and the dialects on
 * the core — Ask, Codex app-server and ACP. `serve` puts HTTP and WebSockets in front of them,
 * `stdio`, `app-server` and `acp` a pair of pipes.
 */
export class BridgeStack {
  host: RunningTauHost | undefined;
  upstream: TauUpstream | undefined;
  core: BridgeCore | undefined;
  bridge: AskBridge | undefined;
  codex: CodexBridge | undefined;
  acp: AcpAgent | undefined;
  url: string | undefined;
  store: GatewayStore | undefined;
  /** With a shared store: the connection without client tools. */
  plain: TauUpstream | undefined;

  /** Starts the host (if embedded), the dialects and the upstream connection; throws on failure (close() cleans up). */
  async start(settings: BridgeStackSettings, commandTools: CommandToolConfig[], log: Log): Promise<void> {
    const token = settings.upstreamToken;
    this.store = await openStore(settings.store ?? "memory", {
      retention: settings.eventRetention,
      leaseTtlMs: settings.storeLeaseMs,
      maxAgeMs: settings.eventMaxAgeMs,
      log,
    });
    if (settings.upstream === "embedded") {
      // A token given with the embedded host protects it too (it listens on loopback only).
      this.host = await startTauHost({ host: "127.0.0.1", port: 0, authToken: token, log: (line) => log("debug", line, { component: "embedded-host" }) });
      this.url = this.host.url;
    } else {
      this.url = settings.upstream;
    }
    const url = this.url;
    // The bridge connection advertises the tools through which the agent reaches clients (DESIGN §4.4).
    const tools = gatewayClientTools(commandTools, { deadlineMs: settings.interactionTimeoutMs });
    this.upstream = new TauUpstream({ url, token, client: { name: "tau-gateway", version: gatewayVersion(), tools }, log });
    if (this.store.kind !== "memory") {
      this.plain = new TauUpstream({ url, token, client: { name: "tau-gateway-replica", version: gatewayVersion() }, log });
    }
    this.core = new BridgeCore({
      upstream: this.upstream,
      shared: this.plain && { store: this.store, hostKey: hostKeyOf(url), plain: this.plain },
      retention: settings.eventRetention,
      interactionDeadlineMs: settings.interactionTimeoutMs,
      commandTools,
      log,
    });
    this.bridge = new AskBridge({
      core: this.core,
      defaultCwd: settings.defaultCwd,
      workspaceRoots: { shared: settings.workspaceRoots ?? [], byTenant: settings.tenantWorkspaceRoots },
      serverVersion: gatewayVersion(),
      log,
    });
    this.acp = new AcpAgent({
      core: this.core,
      serverVersion: gatewayVersion(),
      commandTools,
      abandonedTurnGraceMs: settings.drainTimeout ?? DEFAULT_DRAIN_TIMEOUT_MS,
      log,
    });
    this.codex = new CodexBridge({
      core: this.core,
      defaultCwd: settings.defaultCwd,
      serverVersion: gatewayVersion(),
      // A Codex client's dynamic tools need a connection of their own (Tau takes a connection's tools
      // once); a call may wait for a person as long as an interaction does.
      toolConnection: (clientTools) =>
        new TauUpstream({
          url,
          token,
          client: {
            name: "tau-gateway-dynamic-tools",
            version: gatewayVersion(),
            tools: clientTools.map((tool) => ({ ...tool, executionTimeoutMs: settings.interactionTimeoutMs + DEADLINE_GRACE_MS })),
          },
          reconnect: false,
          log,
        }),
      log,
    });
    // Before the upstream starts, so the core sees every message and reconnect.
    this.core.start();
    await Promise.all([this.upstream.start(), this.plain?.start()]);
    await this.core.claimHost();
  }

  /** Closes in reverse order of starting, each step independent of the others. */
  async close(): Promise<void> {
    // First, while Tau can still hear it: turns of ACP clients still running are interrupted.
    await this.acp?.close().catch(() => undefined);
    await this.bridge?.close().catch(() => undefined);
    await this.core?.close().catch(() => undefined);
    await this.upstream?.close().catch(() => undefined);
    await this.plain?.close().catch(() => undefined);
    // Gives the leases up, so another replica takes the hosts over at once.
    await this.store?.close().catch(() => undefined);
    await this.host?.close().catch(() => undefined);
  }
}
