import type { Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import type { TauUpstream } from "../tau/upstream.js";
import { DEFAULT_INTERACTION_DEADLINE_MS, type CommandToolConfig } from "./interactions/index.js";
import { ReverseRequesterSet } from "./reverse-requester-set.js";
import type { SharedStoreOptions } from "./host-takeover.js";
import { SessionRegistry } from "./session-registry.js";

export interface BridgeCoreOptions {
  /** The bridge connection: advertises the gateway's client tools. */
  upstream: TauUpstream;
  /** Gateway replicas sharing a store (absent: this process is the only one, as with `--store memory`). */
  shared?: SharedStoreOptions;
  /** Events kept per session for replay (default 10000). */
  retention?: number;
  /** How long an interaction waits for a decision (default 300 000 ms). */
  interactionDeadlineMs?: number;
  commandTools?: CommandToolConfig[];
  log?: Log;
}

/**
 * What every client dialect the gateway hosts shares (DESIGN §4.1): the bridge connection to Tau
 * and one record per session on it — hub, event log, interactions. There is one per bridge
 * connection, because Tau sends a session's client-tool calls to the connection that advertised
 * the tools: two sets of records would both answer them. Dialects read the hubs' event streams,
 * resolve interactions, and add the reverse requests their clients answer to `reverse`.
 *
 * With a shared store, the replica holding the host's lease observes sessions on the bridge
 * connection and appends their events; the others observe on a connection without tools and read
 * the events from the store. Requests of every dialect go on that tool-less connection then
 * (`upstream`), because Tau attaches a connection's tools to a session on each request and two
 * connections advertising the same tools in one session collide.
 */
export class BridgeCore {
  /** The connection requests of the dialects go on: the bridge connection, or the tool-less one with a shared store. */
  readonly upstream: TauUpstream;
  /** The connection advertising the gateway's client tools. */
  readonly bridgeConnection: TauUpstream;
  readonly shared: SharedStoreOptions | undefined;
  readonly sessions: SessionRegistry;
  /** The operator's command tools offered on the bridge connection. */
  readonly commandTools: readonly CommandToolConfig[];
  /** The reverse requests of every dialect; an interaction's first answer wins. */
  readonly reverse = new ReverseRequesterSet();
  readonly startedAt = Date.now();
  private readonly unsubscribe: Array<() => void> = [];
  private state: "new" | "started" | "closed" = "new";

  constructor(options: BridgeCoreOptions) {
    this.bridgeConnection = options.upstream;
    this.shared = options.shared;
    this.upstream = options.shared?.plain ?? options.upstream;
    this.commandTools = options.commandTools ?? [];
    this.sessions = new SessionRegistry({
      upstream: options.upstream,
      shared: options.shared,
      retention: options.retention,
      interactionDeadlineMs: options.interactionDeadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS,
      commandTools: [...this.commandTools],
      reverse: this.reverse,
      log: options.log,
    });
  }

  /** Wires the bridge connection's messages and reconnects to the session hubs; later calls do nothing. */
  start(): void {
    if (this.state !== "new") return;
    this.state = "started";
    const { bridgeConnection, sessions, shared } = this;
    this.unsubscribe.push(
      bridgeConnection.onMessage((message) => sessions.route(message)),
      bridgeConnection.onDisconnected(() => sessions.cancelAllInteractions("the connection to the Tau host was lost")),
      bridgeConnection.onConnected(({ reconnected }) => {
        if (reconnected) void sessions.resyncAll();
      }),
    );
    if (shared) {
      const { plain, store, hostKey } = shared;
      this.unsubscribe.push(
        plain.onMessage((message) => sessions.route(message, plain)),
        plain.onConnected(({ reconnected }) => {
          if (reconnected) void sessions.resyncAll(plain);
        }),
        store.ownership.onChange((key, owned) => {
          if (key === hostKey) void sessions.hostOwnershipChanged(owned);
        }),
      );
    }
  }

  /**
   * With a shared store: starts competing for the host's lease and listening for sessions other
   * replicas announce (call once the connections are up). Without one this process owns the host.
   */
  async claimHost(): Promise<void> {
    const { shared, sessions } = this;
    if (!shared) return;
    if (shared.store.hostSessions) {
      const stop = await shared.store.hostSessions.onAnnounce(shared.hostKey, (sessionId) => void sessions.adopt(sessionId));
      this.unsubscribe.push(stop);
    }
    shared.store.ownership.claim(shared.hostKey);
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
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.sessions.cancelAllInteractions("the gateway is shutting down");
  }
}
