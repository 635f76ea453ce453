import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { GatewayStore } from "../store/index.js";
import type { ClientFaultKind } from "./client-faults.js";
import type { GatewayDialect } from "./dialects.js";
import { CallTally } from "./call-tally.js";

/**
 * Which deadline cut a connection: it sent nothing (`idle`), its headers or its body did not
 * finish (`headers`, `request`), or it took nothing of what waited for it (`stalled`: an event
 * stream or a Unix-socket client that stopped reading).
 */
export type NetworkTimeoutStage = "idle" | "headers" | "request" | "stalled";
/** Where: `http` (a TCP connection before it has a route, or between requests), an event stream's route, `socket` (the Unix socket). */
export type NetworkTimeoutRoute = "http" | "socket" | "/rpc/events" | "/inspector/feed";
import type { CallObserver, CallRecord } from "../transports/call-observer.js";
import type { PassthroughCounters } from "../transports/tau-passthrough.js";

/** Where the figures the gateway does not count itself come from. */
export interface MetricsSources {
  /** The `/tau` passthrough's counters (invalid client requests, invalid upstream messages). */
  passthrough: PassthroughCounters;
  /** The bridge connections (reconnects, invalid upstream messages, each Tau host's connection state). */
  upstream: {
    readonly stats: { reconnects: number; invalidMessages: number };
    readonly connected?: boolean;
    readonly hosts?: ReadonlyArray<{ key: string; connected: boolean }>;
  };
  /** The dialects served, for the route labels of their paths and the figures they keep themselves (Ask: events, interactions). */
  dialects?: readonly Pick<GatewayDialect, "route" | "routeLabels" | "metrics">[];
  /** What replicas share; absent (or memory) when nothing is. */
  store?: GatewayStore;
}

/** The label value of a request's path: its route when the gateway has it, else "other" (label values must stay few). */
export function routeLabels(dialects: MetricsSources["dialects"] = []): (url: string | undefined) => string {
  const known = new Set(["/tau", ...dialects.flatMap((dialect) => [dialect.route, ...(dialect.routeLabels ?? [])])]);
  return (url) => {
    const path = (url ?? "").split("?")[0]!;
    return known.has(path) ? path : "other";
  };
}

/** Request durations: from a ping (milliseconds) to a `/tau` turn request answered when the turn settles (minutes). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * The gateway's Prometheus metrics, in a registry of its own (several gateways in one process, as
 * in tests, never share or collide). Counted here as things happen: connections, requests, refused
 * connections, slow consumers, keepalive timeouts, oversized messages. Read from their owners at
 * scrape time: upstream reconnects, events, pending interactions, validation failures.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  /** The route label of a request's URL (see routeLabels). */
  readonly routeLabel: (url: string | undefined) => string;
  /** Client requests of the JSON-RPC dialects answered -32602, by dialect. */
  private readonly invalidParams = new Map<string, number>();

  private readonly connections: Gauge<"route">;
  private readonly connectionsTotal: Counter<"route">;
  private readonly connectionsRefused: Counter<"reason">;
  /** Answered client requests (tau_gateway_requests_total, tau_gateway_request_duration_seconds). */
  private readonly calls = new CallTally(DURATION_BUCKETS);
  private readonly slowConsumers: Counter<"route">;
  private readonly keepaliveTimeouts: Counter<"route">;
  private readonly networkTimeouts: Counter<"route" | "stage">;
  private readonly oversizedMessages: Counter<"route">;
  private readonly clientFaults: Counter<"route" | "kind">;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    this.routeLabel = routeLabels(sources.dialects);
    collectDefaultMetrics({ register: this.registry });

    this.connections = new Gauge({ name: "tau_gateway_connections", help: "Open client WebSocket connections, by route.", labelNames: ["route"], registers });
    this.connectionsTotal = new Counter({ name: "tau_gateway_connections_total", help: "Client WebSocket connections accepted, by route.", labelNames: ["route"], registers });
    this.connectionsRefused = new Counter({
      name: "tau_gateway_connections_refused_total",
      help: "WebSocket upgrades refused before the upgrade, by reason.",
      labelNames: ["reason"],
      registers,
    });
    this.calls.requestsCounter(registers);
    this.calls.durationsHistogram(registers);
    this.slowConsumers = new Counter({
      name: "tau_gateway_slow_consumers_dropped_total",
      help: "Clients disconnected (1013) because too much data waited unread for them, by route.",
      labelNames: ["route"],
      registers,
    });
    this.keepaliveTimeouts = new Counter({
      name: "tau_gateway_keepalive_timeouts_total",
      help: "Clients terminated for not answering a WebSocket ping before the next one, by route.",
      labelNames: ["route"],
      registers,
    });
    this.networkTimeouts = new Counter({
      name: "tau_gateway_network_timeouts_total",
      help: "Client connections closed by a network deadline, by route (http: a TCP connection without a request in progress; /rpc/events, /inspector/feed: event streams; socket: the Unix socket) and stage: idle (sent nothing), headers (headers unfinished, WebSocket upgrades included), request (body unfinished), stalled (took nothing of what waited for it).",
      labelNames: ["route", "stage"],
      registers,
    });
    this.oversizedMessages = new Counter({
      name: "tau_gateway_oversized_messages_total",
      help: "Client WebSocket messages over the size limit (connection closed with 1009), by route.",
      labelNames: ["route"],
      registers,
    });

    this.clientFaults = new Counter({
      name: "tau_gateway_client_faults_total",
      help: "Client WebSocket frames refused by the WebSocket layer (connection closed), by route and kind: invalid_utf8, oversized or protocol.",
      labelNames: ["route", "kind"],
      registers,
    });

    // Figures kept by their owners, read at scrape time.
    new Counter({
      name: "tau_gateway_upstream_reconnects_total",
      help: "Times the gateway's own connection to the Tau host was re-established.",
      registers,
      collect() {
        this.reset();
        this.inc(sources.upstream.stats.reconnects);
      },
    });
    new Gauge({
      name: "tau_gateway_upstream_connected",
      help: "Whether the gateway's own connection to each Tau host is up (1) or not (0), by host (its URL without credentials).",
      labelNames: ["host"],
      registers,
      collect() {
        this.reset();
        const { hosts, connected } = sources.upstream;
        for (const host of hosts ?? (connected === undefined ? [] : [{ key: "upstream", connected }])) this.set({ host: host.key }, host.connected ? 1 : 0);
      },
    });
    const invalidParams = this.invalidParams;
    new Counter({
      name: "tau_gateway_validation_failures_total",
      help: "Messages that failed schema validation, by dialect and source (client or upstream); invalid ones are answered with an error or dropped, never relayed.",
      labelNames: ["dialect", "source"],
      registers,
      collect() {
        this.reset();
        this.inc({ dialect: "tau", source: "client" }, sources.passthrough.invalidClientRequests);
        this.inc({ dialect: "tau", source: "upstream" }, sources.passthrough.invalidUpstreamMessages + sources.upstream.stats.invalidMessages);
        this.inc({ dialect: "ask", source: "client" }, invalidParams.get("ask") ?? 0);
        for (const [dialect, count] of invalidParams) if (dialect !== "ask") this.inc({ dialect, source: "client" }, count);
      },
    });
    if (sources.store) GatewayMetrics.storeMetrics(sources.store, registers);
    for (const dialect of sources.dialects ?? []) dialect.metrics?.(registers);
  }

  /** Records one answered client request (either dialect). */
  static storeMetrics(store: GatewayStore, registers: Registry[]): void {
    new Gauge({
      name: "tau_gateway_store_reachable",
      help: "1 when this replica reaches its shared store (always 1 for memory).",
      registers,
      async collect() {
        this.set((await store.ready()) ? 1 : 0);
      },
    });
    new Gauge({
      name: "tau_gateway_store_leases_owned",
      help: "Tau hosts whose lease this replica holds (it observes their sessions and appends their events).",
      registers,
      collect() {
        this.set(store.ownership.ownedCount());
      },
    });
    new Counter({
      name: "tau_gateway_store_appends_total",
      help: "Batches of events appended to shared session logs, by outcome (fenced: refused because this replica no longer held the host's lease).",
      labelNames: ["outcome"],
      registers,
      collect() {
        this.reset();
        this.inc({ outcome: "appended" }, store.stats.appends - store.stats.appendsFenced);
        this.inc({ outcome: "fenced" }, store.stats.appendsFenced);
      },
    });
    new Counter({
      name: "tau_gateway_store_append_seconds_total",
      help: "Time spent appending batches to shared session logs (divide by tau_gateway_store_appends_total for the mean append latency).",
      registers,
      collect() {
        this.reset();
        this.inc(store.stats.appendSeconds);
      },
    });
  }

  /** Records one answered client request (either dialect). */
  readonly observeCall: CallObserver = (call: CallRecord) => {
    this.calls.record(call);
    if (call.dialect !== "tau" && call.outcome === "invalid_params") this.invalidParams.set(call.dialect, (this.invalidParams.get(call.dialect) ?? 0) + 1);
  };

  /** Counts an accepted connection as open until `onClose` calls back. */
  connectionOpened(route: string, onClose: (listener: () => void) => void): void {
    this.connections.inc({ route });
    this.connectionsTotal.inc({ route });
    onClose(() => this.connections.dec({ route }));
  }

  connectionRefused(reason: string): void {
    this.connectionsRefused.inc({ reason });
  }

  slowConsumerDropped(route: string): void {
    this.slowConsumers.inc({ route });
  }

  keepaliveTimedOut(route: string): void {
    this.keepaliveTimeouts.inc({ route });
  }

  networkTimeout(route: NetworkTimeoutRoute, stage: NetworkTimeoutStage): void {
    this.networkTimeouts.inc({ route, stage });
  }

  oversizedMessage(route: string): void {
    this.oversizedMessages.inc({ route });
  }

  clientFault(route: string, kind: ClientFaultKind): void {
    this.clientFaults.inc({ route, kind });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text for a scrape. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
