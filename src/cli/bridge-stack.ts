import { AcpAgent } from "../acp/agent.js";
import { AskBridge } from "../bridge/ask-bridge.js";
import { BridgeCore } from "../bridge/bridge-core.js";
import { DEADLINE_GRACE_MS, gatewayClientTools, type CommandToolConfig } from "../bridge/interactions/index.js";
import { CodexBridge } from "../codex/codex-bridge.js";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "../gateway/drain.js";
import { gatewayVersion } from "../gateway/version.js";
import { startTauHost, type RunningTauHost } from "../host/index.js";
import type { Log } from "../shared/log.js";
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

  /** Starts the host (if embedded), the dialects and the upstream connection; throws on failure (close() cleans up). */
  async start(settings: BridgeStackSettings, commandTools: CommandToolConfig[], log: Log): Promise<void> {
    const token = settings.upstreamToken;
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
    this.core = new BridgeCore({
      upstream: this.upstream,
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
    await this.upstream.start();
  }

  /** Closes in reverse order of starting, each step independent of the others. */
  async close(): Promise<void> {
    // First, while Tau can still hear it: turns of ACP clients still running are interrupted.
    await this.acp?.close().catch(() => undefined);
    await this.bridge?.close().catch(() => undefined);
    await this.core?.close().catch(() => undefined);
    await this.upstream?.close().catch(() => undefined);
    await this.host?.close().catch(() => undefined);
  }
}
