import type { Event } from "../../generated/ask-v1.0.js";
import type { PendingUserMessagesState, SessionDeltaMessage, Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import { applyDelta, DeltaGapError, InvalidDeltaError } from "../tau/delta-applier.js";
import type { HostOwnership, SessionLogStore } from "../store/index.js";
import { TauResponseError, type TauUpstream, type UpstreamServerMessage } from "../tau/upstream.js";
import { draft, type EventDraft } from "./event-draft.js";
import { EventLog } from "./event-log.js";
import { LogAppender } from "./log-appender.js";
import { LogMirror } from "./log-mirror.js";
import { ResyncBackoff } from "./resync-backoff.js";
import { isMergeable, StreamMerging } from "./stream-merging.js";
import { DeltaTranslator, type IgnoredServerMessageType } from "./translator.js";

/**
 * One Tau session as the Ask side sees it (DESIGN §4.1): the hub observes the session on the
 * bridge connection, keeps the installed snapshot current by applying every `session.delta`
 * (spec §6.2), turns what changed into Ask events, and appends them to the session's event log,
 * which connections read through their own cursors.
 *
 * Whenever the installed state has to be fetched again — the first observe, a delta that does not
 * fit (gap or invalid), a reconnect — messages arriving meanwhile are held back and applied on top
 * of the fetched state afterwards; those it already contains are dropped as stale.
 *
 * Consecutive streamed chunks of one kind that arrive in one tick are appended as one event
 * (stream-merging.ts), so every reader of the log sees the same merged events.
 *
 * Fetches run one at a time. A `session.snapshot` after a delta that does not apply waits longer
 * the more often that happens in a row (see resync-backoff.ts), so an upstream whose deltas keep
 * failing to apply costs a snapshot now and then rather than one per delta.
 *
 * With a shared store (`shared`) the log is a copy of the session's log in the store: the events
 * the hub translates are appended there — only while this replica holds the lease on the session's
 * Tau host, fenced by it — and come back into the local log with the seqs the store gave them;
 * the hub of a replica that does not own the host observes the session only to keep its snapshot
 * current and appends nothing of what it translates.
 */

type Fetch = "session.observe" | "session.snapshot";

export interface SessionHubOptions {
  sessionId: string;
  upstream: TauUpstream;
  /** Events kept for replay (default 10000). */
  retention?: number;
  /** The session's log in a shared store, and the lease that decides who appends to it. */
  shared?: SharedSessionLog;
  log?: Log;
}

export interface SharedSessionLog {
  store: SessionLogStore;
  ownership: HostOwnership;
  hostKey: string;
}

/** How long a replica that does not own the host waits for the owner to begin a new session's log. */
const FIRST_EVENT_WAIT_MS = 10_000;

export class SessionHub {
  readonly sessionId: string;
  readonly log: EventLog;
  private upstreamInUse: TauUpstream;
  private readonly shared: SharedSessionLog | undefined;
  private readonly mirror: LogMirror | undefined;
  private readonly appender: LogAppender | undefined;
  private readonly logLine: Log;
  private installed: Snapshot | undefined;
  private translator: DeltaTranslator | undefined;
  private pendingRevision = 0;
  /** True between attach and detach: only then do upstream messages mean anything. */
  private observing = false;
  /** Fetches scheduled or running; while any is, incoming messages wait in `held`. */
  private fetches = 0;
  private held: UpstreamServerMessage[] = [];
  /** Fetches run one after another, in the order they were asked for. */
  private chain: Promise<void> = Promise.resolve();
  private readonly backoff = new ResyncBackoff();
  /** Set by end(): the log is complete and nothing more is appended. */
  private ended = false;
  private readonly streams = new StreamMerging((event) => this.append(event, "translated"));
  /** `session.snapshot` requests sent after deltas that did not apply (for the metrics). */
  snapshotFetches = 0;

  constructor(options: SessionHubOptions) {
    this.sessionId = options.sessionId;
    this.upstreamInUse = options.upstream;
    this.logLine = options.log ?? (() => undefined);
    this.log = new EventLog({
      retention: options.retention,
      // A broken subscriber must not stop the session's other subscribers or its state tracking.
      onListenerError: (error, event) =>
        this.logLine("error", "event subscriber failed", { sessionId: this.sessionId, seq: event.seq, type: event.type, error: describe(error) }),
    });
    this.shared = options.shared;
    if (this.shared) {
      const mirror = new LogMirror(this.shared.store, this.log, options.retention ?? 10_000, this.logLine);
      this.mirror = mirror;
      this.appender = new LogAppender({
        store: this.shared.store,
        hostKey: this.shared.hostKey,
        knownEpoch: () => mirror.epoch,
        appended: (batch) => mirror.accept(batch),
        log: this.logLine,
      });
    }
  }

  /** Whether the session's state was installed from the current connection (false between a rebind and its observe). */
  get observed(): boolean {
    return this.translator !== undefined;
  }

  /** The Tau connection the session is observed on. */
  get upstream(): TauUpstream {
    return this.upstreamInUse;
  }

  /** Whether what the hub translates goes into the log: always with its own log, else only while this replica owns the host. */
  get translating(): boolean {
    return !this.shared || this.shared.ownership.owns(this.shared.hostKey);
  }

  /**
   * Observes the session on another connection from now on, starting over from a fresh
   * `session.observe` as a hub taking over from another replica does: a resync against the events
   * the shared log already holds.
   */
  async rebind(upstream: TauUpstream): Promise<void> {
    this.streams.flush();
    const previous = this.upstreamInUse;
    this.upstreamInUse = upstream;
    // The old snapshot stays readable until the new one is installed; no translator means "start over".
    this.translator = undefined;
    this.pendingRevision = 0;
    this.held = [];
    if (previous !== upstream) {
      previous.request("session.unobserve", { sessionId: this.sessionId }).catch(() => undefined);
    }
    if (!this.observing) return;
    await this.mirror?.catchUp();
    await this.fetch("session.observe");
  }

  /** Everything appended so far has reached the shared store (immediately without one). */
  async appended(): Promise<void> {
    await this.appender?.flushed();
    await this.mirror?.catchUp();
  }

  /** Reads what the shared store holds beyond the local copy (a resume checks this first); nothing without a store. */
  async catchUp(): Promise<void> {
    await this.mirror?.catchUp();
  }

  /** Whether the log is a copy of a shared one. */
  get sharedLog(): boolean {
    return this.shared !== undefined;
  }

  /** The installed snapshot (after every applied delta). */
  get snapshot(): Snapshot | undefined {
    return this.installed;
  }

  get running(): boolean {
    return this.installed?.lifecycle === "running";
  }

  /** userHistoryEntryId of the running turn. */
  get activeTurnId(): string | undefined {
    if (!this.installed) return undefined;
    const running = Object.values(this.installed.turns).filter((t) => t.state === "running");
    return running[running.length - 1]?.userHistoryEntryId;
  }

  /** ISO-8601 creation time of the session. */
  get createdAt(): string | undefined {
    return this.installed ? new Date(this.installed.createdAt).toISOString() : undefined;
  }

  /**
   * session.observe and install the baselines; the first attach emits session.created (seq 1). An
   * attach after a detach catches up like a resync.
   */
  async attach(): Promise<void> {
    this.observing = true;
    try {
      await this.mirror?.start();
      await this.fetch("session.observe");
    } catch (error) {
      if (!this.translator) this.observing = false;
      throw error;
    }
  }

  /** Another replica owns the host: the session's first events are the owner's to write; wait (bounded) until they are there. */
  async ownersFirstEvent(): Promise<void> {
    if (this.mirror && !this.translating) await this.mirror.waitForFirst(FIRST_EVENT_WAIT_MS);
  }

  /** Routes an upstream message of this session (client-tool messages are handled elsewhere). */
  handle(message: UpstreamServerMessage, from?: TauUpstream): void {
    if (!this.observing || message.sessionId !== this.sessionId) return;
    if (from !== undefined && from !== this.upstreamInUse) return; // from a connection this hub no longer observes on
    if (this.fetches > 0) {
      this.held.push(message);
      return;
    }
    this.process(message);
  }

  /** After an upstream reconnect: observe again and report what happened while away. */
  async resync(): Promise<void> {
    if (!this.observing) return;
    await this.fetch("session.observe");
  }

  /**
   * Appends a gateway event (approval.*, plan.*, input.*, error, …). After end() nothing is
   * appended: a late event (a dropped message's error, a turn settling after the session closed)
   * is logged at debug level and left out, so the last event a client sees stays the last one.
   * With a shared log, `key` names the event for good: appending it again under the same key, from
   * any replica, adds nothing (without one, each event is new).
   */
  emit(event: EventDraft, key?: string): Event | undefined {
    // A streamed chunk still waiting to be merged came first.
    this.streams.flush();
    return this.append(event, "gateway", key);
  }

  /**
   * `translated` events (what Tau did) go to a shared log only with this replica's fence, so a
   * replica that lost the host adds none; `gateway` events (notices, errors, interactions,
   * session.ended) come from whichever replica serves the request and are appended unfenced there.
   */
  private append(event: EventDraft, origin: "translated" | "gateway", key?: string): Event | undefined {
    if (this.ended) {
      this.logLine("debug", "event after the session ended left out", { sessionId: this.sessionId, type: event.type });
      return undefined;
    }
    if (this.shared && this.appender) {
      const fence = this.shared.ownership.fence(this.shared.hostKey);
      if (origin === "translated" && fence === undefined) return undefined;
      this.appender.push(event, fence, key);
      return undefined; // the event reaches the log with the seq the store gives it
    }
    return (this.log.append as (type: Event["type"], payload: unknown) => Event)(event.type, event.payload);
  }

  private emitTranslated(event: EventDraft): void {
    this.streams.flush();
    this.append(event, "translated");
  }

  /** userHistoryEntryIds of every turn Tau reports running (the active one and any settling). */
  get runningTurnIds(): string[] {
    return Object.values(this.installed?.turns ?? {})
      .filter((t) => t.state === "running")
      .map((t) => t.userHistoryEntryId);
  }

  /** Appends the session's last event (session.ended) and closes the log to everything after it. */
  end(last: EventDraft): Event | undefined {
    if (this.ended) throw new Error(`session ${this.sessionId} has already ended`);
    const event = this.emit(last);
    this.ended = true;
    return event;
  }

  /** The session ended through another replica (its session.ended is in the log already): nothing more is appended from here. */
  markEnded(): void {
    this.ended = true;
  }

  /** session.unobserve (errors ignored); later messages are ignored until the next attach. */
  async detach(): Promise<void> {
    this.observing = false;
    this.held = [];
    this.mirror?.stop();
    try {
      await this.upstreamInUse.request("session.unobserve", { sessionId: this.sessionId });
    } catch (error) {
      this.logLine("debug", "session.unobserve failed", { sessionId: this.sessionId, error: describe(error) });
    }
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
          if (this.installed && this.translator) this.publish(this.translator.ephemeral(message, this.installed));
          return;
        default:
          // subagent activity has no Ask event; client-tool messages belong to the interactions
          message.type satisfies IgnoredServerMessageType;
          return;
      }
    } catch (error) {
      // A translation bug must not take the session down; the next delta still applies.
      this.logLine("error", "failed to process an upstream message", { sessionId: this.sessionId, type: message.type, error: describe(error) });
    }
  }

  private applyDelta(message: SessionDeltaMessage): void {
    const before = this.installed;
    const translator = this.translator;
    if (!before || !translator) return;
    let after: Snapshot;
    try {
      const outcome = applyDelta(before, message);
      if (outcome.status === "stale") return;
      after = outcome.snapshot;
    } catch (error) {
      if (!(error instanceof DeltaGapError || error instanceof InvalidDeltaError)) throw error;
      // Spec §6.2 rule 6: stop applying and continue from a fresh snapshot.
      this.logLine(error instanceof DeltaGapError ? "info" : "warn", "delta does not apply; fetching session.snapshot", {
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
    this.publish(translator.delta(message, before, after));
  }

  /** Pending messages are a full replacement, applied only when newer (spec §6.3). */
  private applyPending(state: PendingUserMessagesState): void {
    if (!this.translator || state.revision <= this.pendingRevision) return;
    this.pendingRevision = state.revision;
    this.publish(this.translator.pending(state));
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
        this.logLine(unknown ? "debug" : "warn", `${method} failed`, { sessionId: this.sessionId, error: describe(error) });
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
    if (!this.observing) return; // detached while this fetch waited its turn
    if (method === "session.observe") {
      const result = await this.upstreamInUse.request("session.observe", { sessionId: this.sessionId });
      snapshot = result.snapshot;
      pending = result.pendingUserMessages;
    } else {
      this.snapshotFetches += 1;
      snapshot = await this.upstreamInUse.request("session.snapshot", { sessionId: this.sessionId });
    }
    if (!this.observing) return; // detached while the request was open

    if (!this.translator || !this.installed) {
      this.installed = snapshot;
      if (this.shared && this.log.newestSeq > 0) {
        // The shared log holds what another hub reported (another replica, or this one before it lost the host): continue it.
        this.translator = DeltaTranslator.resumingAfter(snapshot, this.log.read(this.log.oldestSeq - 1).events);
        this.publish(this.translator.resync(snapshot));
      } else {
        this.translator = new DeltaTranslator(snapshot);
        if (this.log.newestSeq === 0 && this.translating) this.emitTranslated(draft("session.created", { sessionId: this.sessionId }));
        // A turn already running when we first look is news to subscribers; the translator counts it as seen.
        for (const turn of Object.values(snapshot.turns)) {
          if (turn.state === "running" && this.translating) this.emitTranslated(draft("turn.started", { turnId: turn.userHistoryEntryId }));
        }
      }
    } else if (snapshot.revision !== this.installed.revision && !this.heldDeltasReach(snapshot.revision)) {
      // State changed without us and the deltas we hold cannot replay it: start over from the fetched state.
      this.installed = snapshot;
      this.publish(this.translator.resync(snapshot));
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
    if (announce && this.translator) this.publish(this.translator.pending(state));
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

  private publish(drafts: EventDraft[]): void {
    // Another replica owns the host and reports the session; this hub only keeps its snapshot current.
    if (!this.translating) return;
    for (const d of drafts) {
      if (isMergeable(d)) this.streams.add(d);
      else this.emitTranslated(d);
    }
  }
}

/** A wait that does not keep the process alive (a gateway shutting down does not wait for it). */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
