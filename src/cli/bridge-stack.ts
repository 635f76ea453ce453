import type { AcpAgent } from "../acp/agent.js";
import { AuditLog, receiptSpan, type ApprovalPolicy, type Receipt } from "../bridge/interactions/index.js";
import { recordSpan } from "../shared/tracing.js";
import type { AskSurface } from "../ask/ask-surface.js";
import { BridgeCore } from "../bridge/bridge-core.js";
import type { HostRouter } from "../bridge/hosts/host-router.js";
import { DEADLINE_GRACE_MS, gatewayClientTools, type CommandToolConfig } from "../bridge/interactions/index.js";
import type { CodexSurface } from "../codex/codex-surface.js";
import type { GatewayDialect } from "../gateway/dialects.js";
import type { SessionReceiptsSource } from "../gateway/routes/receipts.js";
import { gatewayVersion } from "../gateway/version.js";
import { startTauHost, type RunningTauHost } from "../host/index.js";
import type { Log } from "../shared/log.js";
import { hostKeyOf } from "../store/host-key.js";
import { openStore, type GatewayStore } from "../store/index.js";
import type { PlacementStore } from "../store/placement.js";
import { redactUrl } from "../tau/connection.js";
import { reconnectDelay, TauUpstream, UpstreamVersionError } from "../tau/upstream.js";
import type { JsonRpcDialect } from "../transports/call-observer.js";
import type { LoadedDialect, ServeSettingsView, SurfaceContext } from "./dialects/descriptor.js";
import { loadDialects } from "./dialects/loaded.js";

export interface BridgeStackSettings {
  /** `embedded` or ws:// URLs of Tau hosts (none: `embedded`). */
  upstream: string | readonly string[];
  upstreamToken?: string;
  /** Which host each session lives on, with several hosts (default: the store's). */
  placement?: PlacementStore;
  defaultCwd: string;
  /** Roots confining session working directories (empty or absent: unconfined). */
  workspaceRoots?: string[];
  /** Tenants' own roots (from the tokens file), in place of `workspaceRoots`. */
  tenantWorkspaceRoots?: ReadonlyMap<string, readonly string[]>;
  eventRetention: number;
  interactionTimeoutMs: number;
  /** `--approval-policy`, read (absent: the default policy). */
  approvalPolicy?: ApprovalPolicy;
  /** `--audit DIR`: where the approvals' receipts are written as JSON lines. */
  auditDir?: string;
  /** `memory` (default) or `redis://HOST:PORT[/DB]`: what gateway replicas share. */
  store?: string;
  /** Redis store: host lease time to live. */
  storeLeaseMs?: number;
  /** Redis store: events older than this are dropped. */
  eventMaxAgeMs?: number;
}

/**
 * What every command that hosts sessions runs: the upstream Tau hosts (the embedded one by
 * default), a bridge connection to each, the bridge core every dialect shares, and on the core a
 * surface for each dialect of the list (dialects/index.ts). `serve` puts HTTP and WebSockets in
 * front of them, each stdio command a pair of pipes. With a shared store (Redis) each host also gets a
 * connection that advertises no tools, for the hosts whose lease another replica holds.
 */
export class BridgeStack {
  host: RunningTauHost | undefined;
  /** Tau requests of the dialects, each sent to its host; health and counts over every host. */
  upstream: HostRouter | undefined;
  core: BridgeCore | undefined;
  /** The dialects served, each with its surface on the core (in the list's order). */
  private dialects: Array<{ dialect: LoadedDialect; surface: unknown }> = [];
  /** The first host's URL (where `/tau` clients are relayed). */
  url: string | undefined;
  /** Every host's URL, in the order given. */
  urls: string[] = [];
  /** What gateway replicas share (the memory store: nothing). */
  store: GatewayStore | undefined;
  /** The bridge connections (one per host), and with a shared store each host's tool-less one. */
  private readonly connections: TauUpstream[] = [];
  private readonly plainConnections: TauUpstream[] = [];
  private closed = false;
  /** `--audit`: the receipts' JSON lines. */
  audit: AuditLog | undefined;
  /** Who follows the receipts' steps (the inspector's approvals panel). */
  private readonly receiptWatchers = new Set<(receipt: Receipt) => void>();
  /** The receipts of the sessions held here, as `GET /sessions/:id/receipts` and the inspector read them. */
  readonly receipts: SessionReceiptsSource = {
    of: (sessionId) => {
      const record = this.core?.sessions.get(sessionId);
      return record && { tenant: record.tenant, receipts: record.interactions.receipts() };
    },
    mayRead: async (sessionId, principal) => (this.core ? this.core.roles.allows(sessionId, principal, "readReceipts") : false),
    watch: (watch) => {
      this.receiptWatchers.add(watch);
      return () => this.receiptWatchers.delete(watch);
    },
  };

  /**
   * Starts the host (if embedded), the dialects and the upstream connections; throws on failure
   * (close() cleans up). With several hosts it is up once one of them is: the others are tried
   * again in the background, as a host that drops later is.
   */
  async start(settings: BridgeStackSettings, commandTools: CommandToolConfig[], log: Log): Promise<void> {
    const token = settings.upstreamToken;
    if (settings.auditDir !== undefined) this.audit = new AuditLog({ dir: settings.auditDir, log });
    this.store = await openStore(settings.store ?? "memory", {
      retention: settings.eventRetention,
      leaseTtlMs: settings.storeLeaseMs,
      maxAgeMs: settings.eventMaxAgeMs,
      log,
    });
    const targets = typeof settings.upstream === "string" ? [settings.upstream] : settings.upstream.length > 0 ? [...settings.upstream] : ["embedded"];
    if (targets.length === 1 && targets[0] === "embedded") {
      // A token given with the embedded host protects it too (it listens on loopback only).
      this.host = await startTauHost({ host: "127.0.0.1", port: 0, authToken: token, log: (line) => log("debug", line, { component: "embedded-host" }) });
      this.urls = [this.host.url];
    } else {
      this.urls = targets;
    }
    this.url = this.urls[0];
    // The bridge connections advertise the tools through which the agent reaches clients (DESIGN §4.4).
    const tools = gatewayClientTools(commandTools, { deadlineMs: settings.interactionTimeoutMs });
    const sharing = this.store.kind !== "memory";
    const hosts = this.urls.map((url) => {
      const upstream = new TauUpstream({ url, token, client: { name: "tau-gateway", version: gatewayVersion(), tools }, log });
      const plain = sharing ? new TauUpstream({ url, token, client: { name: "tau-gateway-replica", version: gatewayVersion() }, log }) : undefined;
      this.connections.push(upstream);
      if (plain) this.plainConnections.push(plain);
      return { key: hostKeyOf(url), upstream, plain };
    });
    this.core = new BridgeCore({
      hosts,
      placement: settings.placement,
      store: this.store,
      retention: settings.eventRetention,
      interactionDeadlineMs: settings.interactionTimeoutMs,
      commandTools,
      ...(settings.approvalPolicy ? { approvalPolicy: settings.approvalPolicy } : {}),
      receiptSink: (receipt: Receipt) => {
        this.audit?.write(receipt);
        recordSpan(() => receiptSpan(receipt));
      },
      receiptSteps: (receipt: Receipt) => {
        // A watcher's failure is its own: the call's approval goes on.
        for (const watch of this.receiptWatchers) {
          try {
            watch(receipt);
          } catch (error) {
            log("warn", "a receipt watcher failed", { sessionId: receipt.sessionId, error: String(error) });
          }
        }
      },
      log,
    });
    this.upstream = this.core.hosts;
    const router = this.core.hosts;
    // One set of roots for every dialect that creates sessions: Ask, ACP and Codex alike.
    const workspaceRoots = { shared: settings.workspaceRoots ?? [], byTenant: settings.tenantWorkspaceRoots };
    const context: SurfaceContext = {
      core: this.core,
      defaultCwd: settings.defaultCwd,
      workspaceRoots,
      commandTools,
      serverVersion: gatewayVersion(),
      log,
      toolConnection: (clientTools, sessionId) =>
        new TauUpstream({
          url: router.knownHost(sessionId)?.url ?? this.urls[0]!,
          token,
          client: {
            name: "tau-gateway-dynamic-tools",
            version: gatewayVersion(),
            tools: clientTools.map((tool) => ({ ...tool, executionTimeoutMs: settings.interactionTimeoutMs + DEADLINE_GRACE_MS })),
          },
          reconnect: false,
          log,
        }),
    };
    this.dialects = (await loadDialects()).map((dialect) => ({ dialect, surface: dialect.descriptor.createSurface(context) }));
    // Before the upstreams start, so the core sees every message and reconnect.
    this.core.start();
    if (this.connections.length === 1) {
      await Promise.all([this.connections[0]!.start(), this.plainConnections[0]?.start()]);
      await this.core.claimHosts();
      return;
    }
    const all = [...this.connections, ...this.plainConnections];
    const started = await Promise.allSettled(all.map((upstream) => upstream.start()));
    const refused = started.find((outcome) => outcome.status === "rejected" && outcome.reason instanceof UpstreamVersionError);
    if (refused?.status === "rejected") throw refused.reason;
    if (started.every((outcome) => outcome.status === "rejected")) throw (started[0] as PromiseRejectedResult).reason;
    started.forEach((outcome, index) => {
      if (outcome.status === "rejected") this.keepStarting(all[index]!, log, 0);
    });
    await this.core.claimHosts();
  }

  /** A host that was down at start: tried again with the reconnect backoff until it is up (or speaks another version). */
  private keepStarting(upstream: TauUpstream, log: Log, attempt: number): void {
    const timer = setTimeout(() => {
      if (this.closed) return;
      upstream.start().catch((error: Error) => {
        if (this.closed) return;
        if (error instanceof UpstreamVersionError) {
          log("error", "Tau upstream refused: protocol version mismatch; not reconnecting", { url: redactUrl(upstream.url), error: error.message });
          return;
        }
        log("warn", "Tau upstream still unreachable", { url: redactUrl(upstream.url), error: error.message });
        this.keepStarting(upstream, log, attempt + 1);
      });
    }, reconnectDelay(attempt));
    timer.unref();
  }

  /** The surface of the dialect named `name` (once started). */
  surfaceOf<Surface>(name: JsonRpcDialect): Surface {
    const served = this.dialects.find(({ dialect }) => dialect.name === name);
    if (!served) throw new Error(`no ${name} surface: the bridge stack is not started`);
    return served.surface as Surface;
  }

  /** The Ask surface (for tests, which drive it directly). */
  get ask(): AskSurface | undefined {
    return this.surfaceIfStarted("ask");
  }

  /** The Codex app-server surface (for tests). */
  get codex(): CodexSurface | undefined {
    return this.surfaceIfStarted("codex");
  }

  /** The ACP agent (for tests). */
  get acp(): AcpAgent | undefined {
    return this.surfaceIfStarted("acp");
  }

  private surfaceIfStarted<Surface>(name: JsonRpcDialect): Surface | undefined {
    return this.dialects.find(({ dialect }) => dialect.name === name)?.surface as Surface | undefined;
  }

  /** Every dialect as the gateway mounts it: `serve`'s list of routes. */
  gatewayDialects(serve: ServeSettingsView): GatewayDialect[] {
    return this.dialects.map(({ dialect, surface }) => dialect.descriptor.gateway(surface, { name: dialect.name, route: dialect.route }, dialect.descriptor.gatewayOptions?.(serve)));
  }

  /** Closes in reverse order of starting, each step independent of the others. */
  async close(): Promise<void> {
    // First, while Tau can still hear it: what the surfaces hold (turns of ACP clients still running are interrupted).
    for (const { dialect, surface } of [...this.dialects].reverse()) await dialect.descriptor.closeSurface?.(surface).catch(() => undefined);
    await this.core?.close().catch(() => undefined);
    this.closed = true;
    await Promise.all([...this.connections, ...this.plainConnections].map((upstream) => upstream.close().catch(() => undefined)));
    // Gives the leases up, so another replica takes the hosts over at once.
    await this.store?.close().catch(() => undefined);
    await this.host?.close().catch(() => undefined);
    await this.audit?.flushed();
  }
}
