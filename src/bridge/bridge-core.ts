import { randomUUID } from "node:crypto";
import type { ApprovalPolicy } from "./interactions/policy/policy-rules.js";
import type { ReceiptSink, ReceiptWatch } from "./interactions/policy/receipts.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import type { GatewayStore } from "../store/index.js";
import { hostKeyOf } from "../store/host-key.js";
import type { InteractionStore } from "../store/interactions.js";
import { MemoryInteractionStore } from "../store/memory-interactions.js";
import type { HostOwnership } from "../store/ownership.js";
import { MemoryPlacementStore, type PlacementStore } from "../store/placement.js";
import { MemorySessionRoles } from "../store/session-roles.js";
import { SoleOwnership } from "../store/sole-ownership.js";
import type { TauUpstream } from "../tau/upstream.js";
import { HostRouter } from "./hosts/host-router.js";
import { HostedSessions } from "./hosts/hosted-sessions.js";
import { TauHostLink } from "./hosts/tau-host-link.js";
import { DEFAULT_INTERACTION_DEADLINE_MS, ReverseRequesterSet, type CommandToolConfig } from "./interactions/index.js";
import { RequestRecall } from "./request-recall.js";
import { SessionRoles } from "./session-roles.js";
import { endRunningTurns, type EndedTurns } from "./turn-endings.js";

/** A Tau host the core serves: its stable name (store/host-key.ts) and its connections. */
export interface TauHostUpstream {
  key: string;
  /** The bridge connection: advertises the gateway's client tools. */
  upstream: TauUpstream;
  /** With a shared store: a connection to the same host that advertises no tools (see TauHostLink). */
  plain?: TauUpstream;
}

export type BridgeCoreOptions = BridgeCoreSettings &
  (
    | { upstream: TauUpstream; plain?: TauUpstream }
    | {
        /** Several Tau hosts (at least one), in the order new sessions prefer among equally loaded ones. */
        hosts: readonly TauHostUpstream[];
        /** Which host each session lives on (default: the store's, else in this process's memory). */
        placement?: PlacementStore;
      }
  );

export interface BridgeCoreSettings {
  /** Events kept per session for replay (default 10000). */
  retention?: number;
  /** How long an interaction waits for a decision (default 300 000 ms). */
  interactionDeadlineMs?: number;
  commandTools?: CommandToolConfig[];
  /** The operator's approval policy (`--approval-policy`; absent: no rules, each session's mode decides). */
  approvalPolicy?: ApprovalPolicy;
  /** Where each command-tool call's finished receipt goes (`--audit`). */
  receiptSink?: ReceiptSink;
  /** Told every receipt as each step is added to it (the inspector's approvals panel). */
  receiptSteps?: ReceiptWatch;
  /**
   * What gateway replicas share (absent or `memory`: this process is the only one): session logs,
   * host leases, placements and interactions. The three settings below override its parts.
   */
  store?: GatewayStore;
  /** Where interactions are shared with the other replicas (default: the store's, else kept in this process). */
  interactions?: InteractionStore;
  /** Which Tau hosts this replica owns (default: the store's leases, else this process owns every host). */
  ownership?: HostOwnership;
  /** The stable name of a single upstream Tau host, the same on every replica (default: its URL without credentials, store/host-key.ts). */
  hostKey?: string;
  /** This replica's id in the shared store (default: the store's, else a random one). */
  replicaId?: string;
  log?: Log;
}

/**
 * What every client dialect the gateway hosts shares (DESIGN §4.1): per Tau host a bridge
 * connection and one record per session on it — hub, event log, interactions (tau-host-link.ts).
 * There is one set of records per bridge connection, because Tau sends a session's client-tool
 * calls to the connection that advertised the tools: two sets of records on one host would both
 * answer them. Dialects see the hosts as one: `hosts` sends each request to the host it belongs
 * to (host-router.ts) and `sessions` finds each record on its host (hosted-sessions.ts). They read
 * the hubs' event streams, resolve interactions, and add the reverse requests their clients answer
 * to `reverse`.
 *
 * With a shared store, per host the replica holding the host's lease observes sessions on the
 * bridge connection and appends their events; the others read the events from the store, and
 * observe on a connection without tools those sessions whose live state they need (host-takeover.ts,
 * session-hub.ts).
 */
export class BridgeCore {
  /** Tau requests, each sent to the host its session is on (host-router.ts). */
  readonly hosts: HostRouter;
  readonly sessions: HostedSessions;
  /** One link per Tau host: its bridge connection and its sessions' records. */
  readonly hostLinks: readonly TauHostLink[];
  /** The operator's command tools offered on the bridge connection. */
  readonly commandTools: readonly CommandToolConfig[];
  /** The reverse requests of every dialect; an interaction's first answer wins. */
  readonly reverse = new ReverseRequesterSet();
  readonly startedAt = Date.now();
  /** Prompts sent again under their idempotency key (a relay's, after its connection was cut) get the first one's outcome. */
  readonly recall: RequestRecall;
  /** Who may prompt, steer, interrupt, close, answer and grant in each session (the store's, so every replica holds to the same). */
  readonly roles: SessionRoles;
  private state: "new" | "started" | "closed" = "new";
  private readonly log: Log | undefined;

  constructor(options: BridgeCoreOptions) {
    this.log = options.log;
    this.commandTools = options.commandTools ?? [];
    const { store } = options;
    const shared = store && store.kind !== "memory" ? store : undefined;
    this.recall = new RequestRecall(undefined, undefined, undefined, shared?.recalls);
    // An interaction's deciders are read from its session's record, wherever it is hosted.
    this.roles = new SessionRoles(
      store?.roles ?? new MemorySessionRoles(),
      (sessionId, interactionId) => this.sessions.get(sessionId)?.interactions.decidersOf(interactionId) ?? Promise.resolve("any"),
      (sessionId, interactionId) => this.sessions.get(sessionId)?.interactions.needsPrincipals(interactionId) ?? Promise.resolve(false),
    );
    const interactions = options.interactions ?? store?.interactions ?? new MemoryInteractionStore();
    const ownership = options.ownership ?? store?.ownership ?? new SoleOwnership();
    const replicaId = options.replicaId ?? store?.replicaId ?? randomUUID();
    const hosts: readonly TauHostUpstream[] =
      "hosts" in options ? options.hosts : [{ key: options.hostKey ?? hostKeyOf(options.upstream.url), upstream: options.upstream, plain: options.plain }];
    this.hostLinks = hosts.map(
      ({ key, upstream, plain }) =>
        new TauHostLink({
          key,
          upstream,
          shared: shared && plain ? { store: shared, hostKey: key, plain } : undefined,
          retention: options.retention,
          interactionDeadlineMs: options.interactionDeadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS,
          commandTools: [...this.commandTools],
          ...(options.approvalPolicy ? { approvalPolicy: options.approvalPolicy } : {}),
          ...(options.receiptSink ? { receiptSink: options.receiptSink } : {}),
          ...(options.receiptSteps ? { receiptSteps: options.receiptSteps } : {}),
          reverse: this.reverse,
          roles: this.roles,
          share: { store: interactions, hostKey: key, replicaId },
          ownership,
          log: options.log,
        }),
    );
    const placement = ("hosts" in options ? options.placement : undefined) ?? store?.placement ?? new MemoryPlacementStore();
    this.hosts = new HostRouter(this.hostLinks, placement, options.log);
    this.sessions = new HostedSessions(this.hosts);
  }

  /** Wires each host's connections to its session records; later calls do nothing. */
  start(): void {
    if (this.state !== "new") return;
    this.state = "started";
    for (const host of this.hostLinks) host.start();
  }

  /**
   * With a shared store: starts competing for each host's lease and listening for sessions other
   * replicas announce (call once the connections are up). Without one this process owns the hosts.
   */
  async claimHosts(): Promise<void> {
    await Promise.all(this.hostLinks.map((host) => host.claim()));
  }

  /**
   * A session's snapshot for facts that never change (tenant, creation, persona catalog): the
   * hub's when the session is open, else one read; undefined when the session is gone.
   */
  async knownSnapshot(sessionId: string): Promise<Snapshot | undefined> {
    const record = this.sessions.get(sessionId);
    if (record?.hub.snapshot) return record.hub.snapshot;
    try {
      return await this.hosts.request("session.snapshot", { sessionId });
    } catch {
      return undefined; // gone between list and read
    }
  }

  /**
   * Shutting down: interrupts every turn still running (in the sessions named, default all) and
   * gives each its terminal event within `budgetMs`, Tau's or else the gateway's (turn-endings.ts).
   */
  endRunningTurns(budgetMs: number, sessionIds?: readonly string[]): Promise<EndedTurns> {
    const records = sessionIds === undefined ? this.sessions.all() : this.sessions.all().filter((r) => sessionIds.includes(r.sessionId));
    return endRunningTurns(records, this.hosts, budgetMs, this.log);
  }

  /** Approvals and user-input requests waiting for an answer, in every session. */
  get pendingInteractions(): number {
    return this.sessions.all().reduce((sum, r) => sum + r.interactions.list().length, 0);
  }

  /** Stops routing and ends every pending interaction; later calls do nothing. */
  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    await Promise.all(this.hostLinks.map((host) => host.close("the gateway is shutting down")));
  }
}
