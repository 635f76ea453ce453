import type { AnswerConsumer } from "../../store/interactions.js";
import type { HostOwnership } from "../../store/ownership.js";
import type { TauUpstream } from "../../tau/upstream.js";
import type { SharedStoreOptions } from "../host-takeover.js";
import type { InteractionShare } from "../interactions/index.js";
import { SessionRegistry, type SessionRegistryOptions } from "../session-registry.js";

/** A host's records are a session registry (its options, `upstream` being the bridge connection), plus what the host link adds. */
export interface TauHostLinkOptions extends Omit<SessionRegistryOptions, "maxClosedSessions"> {
  /** The host's stable name (store/host-key.ts), the same on every replica; the `share`'s hostKey is this. */
  key: string;
  /** Which hosts this replica owns: the owner of this one delivers its accepted answers to Tau. */
  ownership: HostOwnership;
}

/**
 * One Tau host as the bridge sees it: its bridge connection and the records of the sessions that
 * live on it. Tau sends a session's client-tool calls to the connection that advertised the tools,
 * so each host's records hear only their own connection; a host that drops ends only its own
 * sessions' interactions, and only its own sessions resync when it comes back. While this replica
 * owns the host, it takes the answers accepted on any replica to Tau.
 *
 * With a shared store the dialects' requests go on the tool-less `plain` connection: Tau attaches a
 * connection's tools to a session on each request, and two connections advertising the same tools
 * in one session collide — only the owner's bridge connection may.
 */
export class TauHostLink {
  readonly key: string;
  /** Where the dialects' requests for the host go: the bridge connection, or the tool-less one with a shared store. */
  readonly upstream: TauUpstream;
  /** The connection advertising the gateway's client tools. */
  readonly bridgeConnection: TauUpstream;
  readonly shared: SharedStoreOptions | undefined;
  readonly sessions: SessionRegistry;
  private readonly ownership: HostOwnership;
  private readonly share: InteractionShare;
  /** Taking the host's accepted answers to Tau, while this replica owns the host. */
  private answers: AnswerConsumer | undefined;
  private started = false;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(options: TauHostLinkOptions) {
    this.key = options.key;
    this.bridgeConnection = options.upstream;
    this.shared = options.shared;
    this.upstream = options.shared?.plain ?? options.upstream;
    this.ownership = options.ownership;
    this.share = options.share;
    const { key: _key, ownership: _ownership, ...registry } = options;
    this.sessions = new SessionRegistry(registry);
  }

  get url(): string {
    return this.upstream.url;
  }

  /** Wires the connection's messages and reconnects to the session records, and the host's answers while owned. */
  start(): void {
    const { bridgeConnection, sessions, shared } = this;
    this.started = true;
    this.unsubscribe.push(
      bridgeConnection.onMessage((message) => sessions.route(message)),
      bridgeConnection.onDisconnected(() => sessions.clientTools.cancelAll("the connection to the Tau host was lost")),
      bridgeConnection.onConnected(({ reconnected }) => {
        if (reconnected) void sessions.resyncAll();
      }),
      this.ownership.onChange((hostKey, owned) => {
        if (hostKey !== this.key) return;
        // Hubs observe on the connection that goes with the lease, and the owner alone appends.
        if (shared) void sessions.hostOwnershipChanged(owned);
        // The owner of the host delivers its accepted answers; the next owner takes over the undelivered ones.
        if (!owned) return void this.stopTakingAnswers();
        void sessions.clientTools.catchUpNumbers();
        this.takeAnswers();
      }),
    );
    if (shared) {
      const { plain } = shared;
      this.unsubscribe.push(
        plain.onMessage((message) => sessions.route(message, plain)),
        plain.onConnected(({ reconnected }) => {
          if (reconnected) void sessions.resyncAll(plain);
        }),
      );
    }
    if (this.ownership.owns(this.key)) this.takeAnswers();
  }

  /**
   * With a shared store: starts competing for the host's lease and listening for the sessions other
   * replicas announce on it (once the connections are up). Without one this process owns the host.
   */
  async claim(): Promise<void> {
    const { shared, sessions } = this;
    if (!shared) return;
    if (shared.store.hostSessions) {
      const stop = await shared.store.hostSessions.onAnnounce(shared.hostKey, (sessionId) => void sessions.adopt(sessionId));
      this.unsubscribe.push(stop);
    }
    shared.store.ownership.claim(shared.hostKey);
  }

  /** Stops routing, ends every pending interaction of the host's sessions and stops taking answers. */
  async close(reason: string): Promise<void> {
    this.started = false;
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.sessions.clientTools.cancelAll(reason);
    await this.stopTakingAnswers();
  }

  private takeAnswers(): void {
    if (this.answers || !this.started) return;
    this.answers = this.share.store.consume(this.key, (answer) => this.sessions.clientTools.deliver(answer));
  }

  private async stopTakingAnswers(): Promise<void> {
    const answers = this.answers;
    this.answers = undefined;
    await answers?.stop();
  }
}
