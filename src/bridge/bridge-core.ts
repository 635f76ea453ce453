import type { Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import type { TauUpstream } from "../tau/upstream.js";
import { DEFAULT_INTERACTION_DEADLINE_MS, ReverseRequesters, type CommandToolConfig } from "./interactions/index.js";
import { SessionRegistry } from "./session-registry.js";

export interface BridgeCoreOptions {
  /** The bridge connection: the gateway's own upstream connection, which advertises its client tools. */
  upstream: TauUpstream;
  /** Events kept per session for replay. */
  retention?: number;
  /** How long an interaction waits for a decision (default 300 000 ms). */
  interactionDeadlineMs?: number;
  commandTools?: CommandToolConfig[];
  log?: Log;
}

/**
 * What every client dialect the gateway hosts (Ask, Codex app-server, …) shares: the bridge
 * connection, one record per Tau session (its hub — snapshot, translator, event log — and its
 * interactions), and the clients' ways of answering interactions, to which each dialect adds its
 * own. A dialect translates its methods onto the records and its clients' view out of the hubs'
 * event logs; it never talks to the upstream's message stream itself.
 */
export class BridgeCore {
  readonly upstream: TauUpstream;
  readonly sessions: SessionRegistry;
  /** Every dialect's way of asking its clients; interactions ask them all. */
  readonly reverse = new ReverseRequesters();
  readonly commandTools: readonly CommandToolConfig[];
  readonly startedAt = Date.now();
  private readonly unsubscribe: Array<() => void> = [];
  private started = false;

  constructor(options: BridgeCoreOptions) {
    this.upstream = options.upstream;
    this.commandTools = options.commandTools ?? [];
    this.sessions = new SessionRegistry({
      upstream: options.upstream,
      retention: options.retention,
      interactionDeadlineMs: options.interactionDeadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS,
      commandTools: [...this.commandTools],
      reverse: this.reverse,
      log: options.log,
    });
  }

  /** Wires the bridge connection's messages and reconnects to the session records; once, whoever asks first. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const { upstream, sessions } = this;
    this.unsubscribe.push(
      upstream.onMessage((message) => sessions.route(message)),
      upstream.onDisconnected(() => sessions.cancelAllInteractions("the connection to the Tau host was lost")),
      upstream.onConnected(({ reconnected }) => {
        if (reconnected) void sessions.resyncAll();
      }),
    );
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

  /** Stops routing and ends every pending interaction (with a denial to Tau). Idempotent. */
  close(): void {
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.sessions.cancelAllInteractions("the gateway is shutting down");
  }
}
