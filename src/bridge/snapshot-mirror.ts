import type {
  PendingUserMessagesState,
  SessionDeltaMessage,
  SessionEphemeralMessage,
  SessionSubagentActivitiesMessage,
  Snapshot,
  SubagentActivitiesState,
} from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import { applyDelta, DeltaGapError, InvalidDeltaError } from "../tau/delta-applier.js";
import { TauResponseError, type TauUpstream, type UpstreamServerMessage } from "../tau/upstream.js";
import { ResyncBackoff } from "./resync-backoff.js";
import { errorText } from "../shared/unknown-values.js";

/**
 * A session's installed Tau state, kept current on one connection (spec §6.2, §6.3): the mirror
 * observes the session, applies every `session.delta` to its snapshot and replaces the pending
 * user messages when newer, telling its owner what changed, in order.
 *
 * Whenever the installed state has to be fetched again — the first observe, a delta that does not
 * fit (gap or invalid), a reconnect, another connection — messages arriving meanwhile are held
 * back and applied on top of the fetched state afterwards; those it already contains are dropped
 * as stale.
 *
 * Fetches run one at a time. A `session.snapshot` after a delta that does not apply waits longer
 * the more often that happens in a row (see resync-backoff.ts), so an upstream whose deltas keep
 * failing to apply costs a snapshot now and then rather than one per delta.
 */

/** What changed in the installed state; each call comes after the state it names is installed. */
export interface SnapshotChanges {
  /** The first state installed from the current connection (after attach or rebind): start from it (with the sub-agent activities observe gave). */
  started(snapshot: Snapshot, activities: SubagentActivitiesState | undefined): void;
  /** The state changed without us and the held deltas cannot replay it: start over from it. */
  reset(snapshot: Snapshot): void;
  delta(message: SessionDeltaMessage, before: Snapshot, after: Snapshot): void;
  pending(state: PendingUserMessagesState): void;
  ephemeral(message: SessionEphemeralMessage, installed: Snapshot): void;
  /** A message of the sub-agent activity channel (not yet checked for being newer). */
  activities(message: SessionSubagentActivitiesMessage): void;
  /** The activity channel's whole state, from an observe of a session already installed. */
  activityState(state: SubagentActivitiesState): void;
  /** Server messages that change nothing of the installed state (client tools). */
  ignored(message: UnmirroredMessage): void;
}

export type UnmirroredMessage = Exclude<
  UpstreamServerMessage,
  { type: "session.delta" | "session.pendingUserMessages" | "session.ephemeral" | "session.subagentActivities" }
>;

export interface SnapshotMirrorOptions {
  sessionId: string;
  upstream: TauUpstream;
  changes: SnapshotChanges;
  log: Log;
}

type Fetch = "session.observe" | "session.snapshot";

export class SnapshotMirror {
  private readonly sessionId: string;
  private readonly changes: SnapshotChanges;
  private readonly log: Log;
  private upstreamInUse: TauUpstream;
  private installed: Snapshot | undefined;
  /** Whether `installed` came from the current connection; the old one stays readable meanwhile. */
  private current = false;
  private pendingRevision = 0;
  /** The sub-agent activity lists as the channel has them (spec §6.3), for clients that join. */
  private installedActivities: SubagentActivitiesState | undefined;
  /** True between attach and detach: only then do upstream messages mean anything. */
  private observing = false;
  /** Fetches scheduled or running; while any is, incoming messages wait in `held`. */
  private fetches = 0;
  private held: UpstreamServerMessage[] = [];
  /** Fetches run one after another, in the order they were asked for. */
  private chain: Promise<void> = Promise.resolve();
  private readonly backoff = new ResyncBackoff();
  /** `session.snapshot` requests sent after deltas that did not apply (for the metrics). */
  snapshotFetches = 0;

  constructor(options: SnapshotMirrorOptions) {
    this.sessionId = options.sessionId;
    this.upstreamInUse = options.upstream;
    this.changes = options.changes;
    this.log = options.log;
  }

  /** The installed snapshot (after every applied delta). */
  get snapshot(): Snapshot | undefined {
    return this.installed;
  }

  /** The sub-agents' current activity lists (transient: empty after a host restart). */
  get activities(): SubagentActivitiesState | undefined {
    return this.installedActivities;
  }

  /** Whether the state was installed from the current connection (false between a rebind and its observe). */
  get observed(): boolean {
    return this.current;
  }

  /** The Tau connection the session is observed on. */
  get upstream(): TauUpstream {
    return this.upstreamInUse;
  }

  /**
   * session.observe and install the state; `prepare` runs first, once messages count. An attach
   * after a detach catches up like a resync.
   */
  async attach(prepare?: () => Promise<void>): Promise<void> {
    this.observing = true;
    try {
      await prepare?.();
      await this.fetch("session.observe");
    } catch (error) {
      if (!this.current) this.observing = false;
      throw error;
    }
  }

  /**
   * Observes the session on another connection from now on, starting over from a fresh
   * `session.observe` (after `prepare`); the previous connection unobserves it.
   */
  async rebind(upstream: TauUpstream, prepare?: () => Promise<void>): Promise<void> {
    const previous = this.upstreamInUse;
    this.upstreamInUse = upstream;
    this.current = false;
    this.pendingRevision = 0;
    this.held = [];
    if (previous !== upstream) {
      previous.request("session.unobserve", { sessionId: this.sessionId }).catch(() => undefined);
    }
    if (!this.observing) return;
    await prepare?.();
    await this.fetch("session.observe");
  }

  /** After an upstream reconnect: observe again and report what happened while away. */
  async resync(): Promise<void> {
    if (!this.observing) return;
    await this.fetch("session.observe");
  }

  /** session.unobserve (errors ignored); later messages are ignored until the next attach. */
  async detach(): Promise<void> {
    this.observing = false;
    this.held = [];
    try {
      await this.upstreamInUse.request("session.unobserve", { sessionId: this.sessionId });
    } catch (error) {
      this.log("debug", "session.unobserve failed", { sessionId: this.sessionId, error: errorText(error) });
    }
  }

  /** Takes an upstream message of this session (client-tool messages are handled elsewhere). */
  handle(message: UpstreamServerMessage, from?: TauUpstream): void {
    if (!this.observing || message.sessionId !== this.sessionId) return;
    if (from !== undefined && from !== this.upstreamInUse) return; // from a connection no longer observed on
    if (this.fetches > 0) {
      this.held.push(message);
      return;
    }
    this.process(message);
  }

  private process(message: UpstreamServerMessage): void {
    try {
      switch (message.type) {
        case "session.delta":
          this.applyDelta(message);
          return;
        case "session.pendingUserMessages":
          this.applyPending(message.state);
          return;
        case "session.ephemeral":
          if (this.installed && this.current) this.changes.ephemeral(message, this.installed);
          return;
        case "session.subagentActivities":
          this.applyActivities(message);
          return;
        default:
          this.changes.ignored(message);
          return;
      }
    } catch (error) {
      // A translation bug must not take the session down; the next delta still applies.
      this.log("error", "failed to process an upstream message", { sessionId: this.sessionId, type: message.type, error: errorText(error) });
    }
  }

  private applyDelta(message: SessionDeltaMessage): void {
    const before = this.installed;
    if (!before || !this.current) return;
    let after: Snapshot;
    try {
      // The installed snapshot is the newest: its growing records are handed on, not copied.
      const outcome = applyDelta(before, message, { share: true });
      if (outcome.status === "stale") return;
      after = outcome.snapshot;
    } catch (error) {
      if (!(error instanceof DeltaGapError || error instanceof InvalidDeltaError)) throw error;
      // Spec §6.2 rule 6: stop applying and continue from a fresh snapshot.
      this.log(error instanceof DeltaGapError ? "info" : "warn", "delta does not apply; fetching session.snapshot", {
        sessionId: this.sessionId,
        fromRevision: message.fromRevision,
        toRevision: message.toRevision,
        installedRevision: before.revision,
        error: error.message,
      });
      this.fetch("session.snapshot", this.backoff.next()).catch(() => undefined); // failures are logged inside
      return;
    }
    this.installed = after;
    this.changes.delta(message, before, after);
  }

  /** Pending messages are a full replacement, applied only when newer (spec §6.3). */
  private applyPending(state: PendingUserMessagesState): void {
    if (!this.current || state.revision <= this.pendingRevision) return;
    this.pendingRevision = state.revision;
    this.changes.pending(state);
  }

  /** Activity lists change only with a newer revision: `agent.set` replaces an agent's list, `agent.remove` deletes it. */
  private applyActivities(message: SessionSubagentActivitiesMessage): void {
    if (!this.current) return;
    const installed = this.installedActivities;
    if (installed && message.revision > installed.revision) {
      const agents = { ...installed.agents };
      for (const change of message.changes) {
        if (change.type === "agent.set") agents[change.agentId] = change.state;
        else delete agents[change.agentId];
      }
      this.installedActivities = { revision: message.revision, agents };
    }
    this.changes.activities(message);
  }

  /**
   * Schedules a fetch of the whole state. Messages are held from now on (not only once the fetch
   * starts), so nothing is applied to a snapshot that is about to be replaced.
   */
  private fetch(method: Fetch, delayMs = 0): Promise<void> {
    this.fetches += 1;
    const run = async () => {
      try {
        if (delayMs > 0) await sleep(delayMs);
        await this.install(method);
      } catch (error) {
        // An unknown session is the client's mistake (answered -32004), not the gateway's: no warning per request.
        const unknown = error instanceof TauResponseError && error.code === "not_found";
        this.log(unknown ? "debug" : "warn", `${method} failed`, { sessionId: this.sessionId, error: errorText(error) });
        throw error;
      } finally {
        this.fetches -= 1;
        if (this.fetches === 0) this.releaseHeld();
      }
    };
    const next = this.chain.then(run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async install(method: Fetch): Promise<void> {
    let snapshot: Snapshot;
    let pending: PendingUserMessagesState | undefined;
    let activities: SubagentActivitiesState | undefined;
    if (!this.observing) return; // detached while this fetch waited its turn
    if (method === "session.observe") {
      const result = await this.upstreamInUse.request("session.observe", { sessionId: this.sessionId });
      snapshot = result.snapshot;
      pending = result.pendingUserMessages;
      activities = result.subagentActivities;
    } else {
      this.snapshotFetches += 1;
      snapshot = await this.upstreamInUse.request("session.snapshot", { sessionId: this.sessionId });
    }
    if (!this.observing) return; // detached while the request was open

    if (!this.current || !this.installed) {
      this.installed = snapshot;
      this.current = true;
      this.installedActivities = activities;
      this.changes.started(snapshot, activities);
      activities = undefined;
    } else if (snapshot.revision !== this.installed.revision && !this.heldDeltasReach(snapshot.revision)) {
      // State changed without us and the deltas we hold cannot replay it: start over from the fetched state.
      this.installed = snapshot;
      this.changes.reset(snapshot);
    }
    if (activities) {
      // Observe's lists are the channel's truth on this connection (after a host restart its revision starts again).
      this.installedActivities = activities;
      this.changes.activityState(activities);
    }
    if (pending) this.installPending(pending);
  }

  /**
   * A pending list from session.observe is the truth of a (possibly new) upstream connection:
   * after a host restart its revision starts again at 1, so it replaces ours whatever its number.
   */
  private installPending(state: PendingUserMessagesState): void {
    const changed = state.revision !== this.pendingRevision;
    const announce = changed && (this.pendingRevision > 0 || state.messages.length > 0);
    this.pendingRevision = state.revision;
    if (announce && this.current) this.changes.pending(state);
  }

  /**
   * Whether the held deltas carry the installed snapshot, change by change, to at least `revision`
   * (a dry run: applyDelta is pure). Then nothing was lost — the deltas merely raced the fetch —
   * and applying them reports every change instead of a reset.
   */
  private heldDeltasReach(revision: number): boolean {
    let snapshot = this.installed;
    if (!snapshot || snapshot.revision > revision) return false;
    for (const message of this.held) {
      if (message.type !== "session.delta") continue;
      try {
        snapshot = applyDelta(snapshot, message).snapshot;
      } catch {
        return false;
      }
      if (snapshot.revision >= revision) return true;
    }
    return false;
  }

  private releaseHeld(): void {
    while (this.held.length > 0 && this.fetches === 0) {
      this.process(this.held.shift() as UpstreamServerMessage);
    }
  }
}

/** A wait that does not keep the process alive (a gateway shutting down does not wait for it). */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
