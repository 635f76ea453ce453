import type { Log } from "../shared/log.js";
import type { GatewayStore } from "../store/index.js";
import { TauResponseError, type TauUpstream } from "../tau/upstream.js";

/** How often observing a session on another connection is tried before giving up (about half a minute in all). */
const ATTEMPTS = 20;

/** A store shared with other gateway replicas, and what this replica needs to take part. */
export interface SharedStoreOptions {
  store: GatewayStore;
  /** The Tau host's stable name (its URL without credentials): the lease and the session set are per host. */
  hostKey: string;
  /** A connection to the same host that advertises no client tools: requests, and observation while another replica owns the host. */
  plain: TauUpstream;
}

/** What the takeover needs of a session's hub (session-hub.ts). */
export interface TakeoverHub {
  readonly sessionId: string;
  readonly upstream: TauUpstream;
  readonly observed: boolean;
  rebind(upstream: TauUpstream): Promise<void>;
  ownersFirstEvent(): Promise<void>;
}

/** What the takeover needs of a session's record: its hub, and its interactions (session-interactions.ts). */
export interface TakeoverRecord {
  readonly sessionId: string;
  readonly hub: TakeoverHub;
  readonly interactions: { endLeftBehind(): Promise<void> };
}

/** What the takeover needs of the session registry. */
export interface TakeoverSessions {
  all(): TakeoverRecord[];
  get(sessionId: string): TakeoverRecord | undefined;
  open(sessionId: string): Promise<TakeoverRecord>;
  isClosed(sessionId: string): boolean;
}

/**
 * How a replica's sessions follow the lease on their Tau host. The lease holder observes on the
 * bridge connection (the one advertising the gateway's tools) and appends; the others observe on
 * the tool-less connection the sessions whose live state they need (a hub may read its log alone,
 * session-hub.ts), and append nothing they translate.
 */
export class HostTakeover {
  constructor(
    private readonly sessions: TakeoverSessions,
    private readonly bridgeConnection: TauUpstream,
    private readonly shared: SharedStoreOptions,
    private readonly log?: Log,
  ) {}

  /** The connection hubs observe on now. */
  get observingConnection(): TauUpstream {
    const { store, hostKey, plain } = this.shared;
    return store.ownership.owns(hostKey) ? this.bridgeConnection : plain;
  }

  /**
   * This replica gained or lost the lease on the host. Gained: every hub observes on the bridge
   * connection and continues the shared logs (a resync), and every session any replica announced
   * for the host is opened, so its events are reported. Lost: hubs observe on the plain
   * connection and stop appending.
   */
  async ownershipChanged(owned: boolean): Promise<void> {
    const { store, hostKey } = this.shared;
    await Promise.all(this.sessions.all().map((r) => this.rebind(r)));
    if (!owned || !store.hostSessions) return;
    let sessionIds: string[] = [];
    try {
      sessionIds = await store.hostSessions.list(hostKey);
    } catch (error) {
      this.log?.("warn", "the host's sessions could not be listed from the store", { error: String(error) });
    }
    await Promise.all(sessionIds.map((sessionId) => this.adopt(sessionId)));
  }

  /** Another replica announced a session of the host: its owner observes and reports it. */
  async adopt(sessionId: string): Promise<void> {
    const { store, hostKey } = this.shared;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (!store.ownership.owns(hostKey) || this.sessions.isClosed(sessionId)) return;
      try {
        this.observedWithTools(await this.sessions.open(sessionId));
        return;
      } catch (error) {
        this.log?.("debug", "an announced session could not be observed", { sessionId, attempt, error: String(error) });
        if (error instanceof TauResponseError && error.code === "not_found") {
          await store.hostSessions?.forget(hostKey, sessionId).catch(() => undefined);
          return;
        }
        // Most likely the previous owner's connection is still attached: try again shortly.
        await pause(attempt);
      }
    }
  }

  /**
   * Observes the session on the connection this replica should use now. Right after a takeover
   * the previous owner's bridge connection may still be attached to the session with the same
   * tools (Tau refuses the observe then), so a failure is retried for a while.
   */
  async rebind(record: TakeoverRecord): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const connection = this.observingConnection;
      if (this.sessions.isClosed(record.sessionId) || this.sessions.get(record.sessionId) !== record) return;
      if (record.hub.upstream === connection && record.hub.observed) return;
      try {
        await record.hub.rebind(connection);
        this.observedWithTools(record);
        return;
      } catch (error) {
        if (attempt >= ATTEMPTS) {
          this.log?.("warn", "observing the session on another connection failed", { sessionId: record.sessionId, error: String(error) });
          return;
        }
        this.log?.("debug", "observing the session on another connection failed; trying again", { sessionId: record.sessionId, attempt, error: String(error) });
        await pause(attempt);
      }
    }
  }

  /**
   * A session this replica now observes on the bridge connection as the host's owner: Tau attached
   * its tools, so no other replica's connection has them attached there, and the calls of the
   * interactions another replica left pending are over (they end: PendingInteractions.endLeftBehind).
   */
  observedWithTools(record: TakeoverRecord): void {
    const { store, hostKey } = this.shared;
    if (record.hub.upstream !== this.bridgeConnection || !record.hub.observed || !store.ownership.owns(hostKey)) return;
    void record.interactions.endLeftBehind().catch((error: unknown) => this.log?.("warn", "interactions left by another replica could not be ended", { sessionId: record.sessionId, error: String(error) }));
  }

  /** Records the session for the host's owner (now and later) and waits, when another replica owns the host, for its first events. */
  async announce(hub: TakeoverHub): Promise<void> {
    const { store, hostKey } = this.shared;
    if (!store.hostSessions) return;
    await store.hostSessions.announce(hostKey, hub.sessionId).catch((error: unknown) => this.log?.("warn", "announcing a session to the store failed", { sessionId: hub.sessionId, error: String(error) }));
    await hub.ownersFirstEvent();
  }

  /** A closed session is no longer one for the host's next owner to observe. */
  forget(sessionId: string): void {
    void this.shared.store.hostSessions?.forget(this.shared.hostKey, sessionId).catch(() => undefined);
  }
}

function pause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(250 * attempt, 2_000)).unref());
}
