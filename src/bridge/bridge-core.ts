import { randomUUID } from "node:crypto";
import type { Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import { hostKeyOf } from "../store/host-key.js";
import { MemoryPlacementStore, type PlacementStore } from "../store/placement.js";
import type { InteractionStore } from "../store/interactions.js";
import { MemoryInteractionStore } from "../store/memory-interactions.js";
import type { HostOwnership } from "../store/ownership.js";
import { SoleOwnership } from "../store/sole-ownership.js";
import type { TauUpstream } from "../tau/upstream.js";
import { HostRouter } from "./hosts/host-router.js";
import { HostedSessions } from "./hosts/hosted-sessions.js";
import { TauHostLink } from "./hosts/tau-host-link.js";
import { DEFAULT_INTERACTION_DEADLINE_MS, type CommandToolConfig } from "./interactions/index.js";
import { ReverseRequesterSet } from "./reverse-requester-set.js";

/** A Tau host the core serves: its stable name (store/host-key.ts) and its bridge connection. */
export interface TauHostUpstream {
  key: string;
  upstream: TauUpstream;
}

export type BridgeCoreOptions = BridgeCoreSettings &
  (
    | { upstream: TauUpstream }
    | {
        /** Several Tau hosts (at least one), in the order new sessions prefer among equally loaded ones. */
        hosts: readonly TauHostUpstream[];
        /** Which host each session lives on (default: in this process's memory). */
        placement?: PlacementStore;
      }
  );

export interface BridgeCoreSettings {
  /** Events kept per session for replay (default 10000). */
  retention?: number;
  /** How long an interaction waits for a decision (default 300 000 ms). */
  interactionDeadlineMs?: number;
  commandTools?: CommandToolConfig[];
  /** Where interactions are shared with the other replicas (default: kept in this process). */
  interactions?: InteractionStore;
  /** Which Tau hosts this replica owns (default: this process owns every host). */
  ownership?: HostOwnership;
  /** The stable name of a single upstream Tau host, the same on every replica (default: its URL without credentials, store/host-key.ts). */
  hostKey?: string;
  /** This replica's id in the shared store (default: a random one). */
  replicaId?: string;
  log?: Log;
}

/**
 * What every client dialect the gateway hosts shares (DESIGN §4.1): per Tau host a bridge
 * connection and one record per session on it — hub, event log, interactions (tau-host-link.ts).
 * There is one set of records per bridge connection, because Tau sends a session's client-tool
 * calls to the connection that advertised the tools: two sets of records on one host would both
 * answer them. Dialects see the hosts as one: `upstream` sends each request to the host it belongs
 * to (host-router.ts) and `sessions` finds each record on its host (hosted-sessions.ts). They read
 * the hubs' event streams, resolve interactions, and add the reverse requests their clients answer
 * to `reverse`.
 */
export class BridgeCore {
  readonly upstream: HostRouter;
  readonly sessions: HostedSessions;
  readonly hosts: readonly TauHostLink[];
  /** The operator's command tools offered on the bridge connection. */
  readonly commandTools: readonly CommandToolConfig[];
  /** The reverse requests of every dialect; an interaction's first answer wins. */
  readonly reverse = new ReverseRequesterSet();
  readonly startedAt = Date.now();
  private state: "new" | "started" | "closed" = "new";

  constructor(options: BridgeCoreOptions) {
    this.commandTools = options.commandTools ?? [];
    const interactions = options.interactions ?? new MemoryInteractionStore();
    const ownership = options.ownership ?? new SoleOwnership();
    const replicaId = options.replicaId ?? randomUUID();
    const hosts = "hosts" in options ? options.hosts : [{ key: options.hostKey ?? hostKeyOf(options.upstream.url), upstream: options.upstream }];
    this.hosts = hosts.map(
      ({ key, upstream }) =>
        new TauHostLink({
          key,
          upstream,
          retention: options.retention,
          interactionDeadlineMs: options.interactionDeadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS,
          commandTools: [...this.commandTools],
          reverse: this.reverse,
          share: { store: interactions, hostKey: key, replicaId },
          ownership,
          log: options.log,
        }),
    );
    const placement = ("hosts" in options ? options.placement : undefined) ?? new MemoryPlacementStore();
    this.upstream = new HostRouter(this.hosts, placement, options.log);
    this.sessions = new HostedSessions(this.upstream);
  }

  /** Wires each bridge connection's messages and reconnects to its session records; later calls do nothing. */
  start(): void {
    if (this.state !== "new") return;
    this.state = "started";
    for (const host of this.hosts) host.start();
  }

  /**
   * A session's snapshot for facts that never change (tenant, creation, persona catalog): the
   * hub's when the session is open, else one read; undefined when the session is gone.
   */
  async knownSnapshot(sessionId: string): Promise<Snapshot | undefined> {
    const record = this.sessions.get(sessionId);
    if (record?.hub.snapshot) return record.hub.snapshot;
    try {
      return await this.upstream.request("session.snapshot", { sessionId });
    } catch {
      return undefined; // gone between list and read
    }
  }

  /** Approvals and user-input requests waiting for an answer, in every session. */
  get pendingInteractions(): number {
    return this.sessions.all().reduce((sum, r) => sum + r.interactions.list().length, 0);
  }

  /** Stops routing and ends every pending interaction; later calls do nothing. */
  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    await Promise.all(this.hosts.map((host) => host.close("the gateway is shutting down")));
  }
}
