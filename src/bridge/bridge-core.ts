import { randomUUID } from "node:crypto";
import type { Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import type { AnswerConsumer, InteractionStore } from "../store/interactions.js";
import { MemoryInteractionStore } from "../store/memory-interactions.js";
import type { HostOwnership } from "../store/ownership.js";
import { SoleOwnership } from "../store/sole-ownership.js";
import type { TauUpstream } from "../tau/upstream.js";
import { DEFAULT_INTERACTION_DEADLINE_MS, type CommandToolConfig } from "./interactions/index.js";
import { ReverseRequesterSet } from "./reverse-requester-set.js";
import { SessionRegistry } from "./session-registry.js";

export interface BridgeCoreOptions {
  upstream: TauUpstream;
  /** Events kept per session for replay (default 10000). */
  retention?: number;
  /** How long an interaction waits for a decision (default 300 000 ms). */
  interactionDeadlineMs?: number;
  commandTools?: CommandToolConfig[];
  /** Where interactions are shared with the other replicas (default: kept in this process). */
  interactions?: InteractionStore;
  /** Which Tau hosts this replica owns (default: this process owns every host). */
  ownership?: HostOwnership;
  /** The stable name of the upstream Tau host, the same on every replica (default "tau"). */
  hostKey?: string;
  /** This replica's id in the shared store (default: a random one). */
  replicaId?: string;
  log?: Log;
}

/**
 * What every client dialect the gateway hosts shares (DESIGN §4.1): the bridge connection to Tau
 * and one record per session on it — hub, event log, interactions. There is one per bridge
 * connection, because Tau sends a session's client-tool calls to the connection that advertised
 * the tools: two sets of records would both answer them. Dialects read the hubs' event streams,
 * resolve interactions, and add the reverse requests their clients answer to `reverse`.
 */
export class BridgeCore {
  readonly upstream: TauUpstream;
  readonly sessions: SessionRegistry;
  /** The operator's command tools offered on the bridge connection. */
  readonly commandTools: readonly CommandToolConfig[];
  /** The reverse requests of every dialect; an interaction's first answer wins. */
  readonly reverse = new ReverseRequesterSet();
  readonly startedAt = Date.now();
  readonly hostKey: string;
  private readonly interactions: InteractionStore;
  private readonly ownership: HostOwnership;
  /** Taking the host's accepted answers to Tau, while this replica owns the host. */
  private answers: AnswerConsumer | undefined;
  private readonly unsubscribe: Array<() => void> = [];
  private state: "new" | "started" | "closed" = "new";

  constructor(options: BridgeCoreOptions) {
    this.upstream = options.upstream;
    this.commandTools = options.commandTools ?? [];
    this.hostKey = options.hostKey ?? "tau";
    this.interactions = options.interactions ?? new MemoryInteractionStore();
    this.ownership = options.ownership ?? new SoleOwnership();
    this.sessions = new SessionRegistry({
      upstream: options.upstream,
      retention: options.retention,
      interactionDeadlineMs: options.interactionDeadlineMs ?? DEFAULT_INTERACTION_DEADLINE_MS,
      commandTools: [...this.commandTools],
      reverse: this.reverse,
      share: { store: this.interactions, hostKey: this.hostKey, replicaId: options.replicaId ?? randomUUID() },
      log: options.log,
    });
  }

  /** Wires the bridge connection's messages and reconnects to the session hubs; later calls do nothing. */
  start(): void {
    if (this.state !== "new") return;
    this.state = "started";
    const { upstream, sessions } = this;
    this.unsubscribe.push(
      upstream.onMessage((message) => sessions.route(message)),
      upstream.onDisconnected(() => sessions.cancelAllInteractions("the connection to the Tau host was lost")),
      upstream.onConnected(({ reconnected }) => {
        if (reconnected) void sessions.resyncAll();
      }),
      // The owner of the host delivers its accepted answers; the next owner takes over the undelivered ones.
      this.ownership.onChange((hostKey, owned) => {
        if (hostKey !== this.hostKey) return;
        if (!owned) return void this.stopTakingAnswers();
        void this.sessions.catchUpInteractionNumbers();
        this.takeAnswers();
      }),
    );
    if (this.ownership.owns(this.hostKey)) this.takeAnswers();
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
    await this.stopTakingAnswers();
  }

  private takeAnswers(): void {
    if (this.answers || this.state !== "started") return;
    this.answers = this.interactions.consume(this.hostKey, (answer) => this.sessions.deliver(answer));
  }

  private async stopTakingAnswers(): Promise<void> {
    const answers = this.answers;
    this.answers = undefined;
    await answers?.stop();
  }
}
