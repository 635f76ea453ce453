import type { Event } from "../../generated/ask-v1.0.js";
import type { Snapshot, SubagentActivitiesState } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import type { HostOwnership, SessionLogStore } from "../store/index.js";
import type { TauUpstream, UpstreamServerMessage } from "../tau/upstream.js";
import { DeltaSources, type DeltaSource } from "./delta-sources.js";
import { draft, type EventDraft } from "./event-draft.js";
import { EventLog } from "./event-log.js";
import { LogAppender } from "./log-appender.js";
import { LogMirror } from "./log-mirror.js";
import { LogReading } from "./log-reading.js";
import { RunningTurns } from "./running-turns.js";
import { SnapshotMirror, type SnapshotChanges } from "./snapshot-mirror.js";
import { isMergeable, StreamMerging } from "./stream-merging.js";
import type { IgnoredServerMessageType } from "./translation/translated-kinds.js";
import { DeltaTranslator } from "./translation/translator.js";
import { errorText } from "../shared/unknown-values.js";

/**
 * One Tau session as the Ask side sees it (DESIGN §4.1): the hub observes the session on the
 * bridge connection, keeps its installed state current (snapshot-mirror.ts), turns what changed
 * into Ask events, and appends them to the session's event log, which connections read through
 * their own cursors.
 *
 * Consecutive streamed chunks of one kind that arrive in one tick are appended as one event
 * (stream-merging.ts), so every reader of the log sees the same merged events.
 *
 * With a shared store (`shared`) the log is a copy of the session's log in the store: the events
 * the hub translates are appended there — only while this replica holds the lease on the session's
 * Tau host, fenced by it — and come back into the local log with the seqs the store gave them;
 * the hub of a replica that does not own the host appends nothing of what it translates.
 *
 * Such a hub opened to serve the log alone (an Ask subscription) observes nothing until its
 * replica needs the live state (`follow`): the owner already observes, checks and translates
 * every delta, and each replica paying for all of them again cost about what the owner does.
 */

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
  private readonly snapshotMirror: SnapshotMirror;
  private readonly shared: SharedSessionLog | undefined;
  private readonly logMirror: LogMirror | undefined;
  private readonly appender: LogAppender | undefined;
  private readonly logLine: Log;
  /** Replaced whenever the state starts over on a connection (see `started`). */
  private translator: DeltaTranslator | undefined;
  /**
   * Set once the hub skipped translating a delta because another replica owns the host: the
   * translator no longer knows what the log reports, and is made again from the log before it
   * translates anything (caughtUpTranslator).
   */
  private translatorBehind = false;
  /** Set while the hub reads its session's log alone (`attach({ follow: false })`), until it observes the session. */
  private reading: LogReading | undefined;
  /** The observe follow() started, which callers that come while it runs wait for too. */
  private following: Promise<void> | undefined;
  /** Set by end(): the log is complete and nothing more is appended. */
  private ended = false;
  private readonly streams = new StreamMerging((event) => this.append(event, "translated", undefined, this.deltaSources.takeStreamed()));
  /** Which Tau deltas the events of the local log were translated from. */
  private readonly deltaSources: DeltaSources;
  private readonly runningTurns = new RunningTurns();

  constructor(options: SessionHubOptions) {
    this.sessionId = options.sessionId;
    this.deltaSources = new DeltaSources(options.retention ?? 10_000);
    this.logLine = options.log ?? (() => undefined);
    this.snapshotMirror = new SnapshotMirror({ sessionId: options.sessionId, upstream: options.upstream, changes: this.translation(), log: this.logLine });
    this.log = new EventLog({
      retention: options.retention,
      sessionId: options.sessionId,
      // A broken subscriber must not stop the session's other subscribers or its state tracking.
      onListenerError: (error, event) =>
        this.logLine("error", "event subscriber failed", { sessionId: this.sessionId, seq: event.seq, type: event.type, error: errorText(error) }),
    });
    this.shared = options.shared;
    if (this.shared) {
      const logMirror = new LogMirror(this.shared.store, this.log, options.retention ?? 10_000, this.logLine);
      this.logMirror = logMirror;
      this.appender = new LogAppender({
        store: this.shared.store,
        hostKey: this.shared.hostKey,
        knownEpoch: () => logMirror.epoch,
        appended: (batch) => logMirror.accept(batch),
        log: this.logLine,
      });
    }
  }

  /** Whether the session's state was installed from the current connection (false between a rebind and its observe). */
  get observed(): boolean {
    return this.snapshotMirror.observed;
  }

  /** The Tau connection the session is observed on. */
  get upstream(): TauUpstream {
    return this.snapshotMirror.upstream;
  }

  /** `session.snapshot` requests sent after deltas that did not apply (for the metrics). */
  get snapshotFetches(): number {
    return this.snapshotMirror.snapshotFetches;
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
    await this.snapshotMirror.rebind(upstream, async () => {
      await this.logMirror?.catchUp();
    });
    // A hub reading the log alone on a replica that now owns the host: it reports the session from here on.
    if (this.reading && this.translating) await this.follow();
  }

  /** Everything appended so far has reached the shared store (immediately without one). */
  async appended(): Promise<void> {
    await this.appender?.flushed();
    await this.logMirror?.catchUp();
  }

  /** Reads what the shared store holds beyond the local copy (a resume checks this first); nothing without a store. */
  async catchUp(): Promise<void> {
    await this.logMirror?.catchUp();
  }

  /** Whether the log is a copy of a shared one. */
  get sharedLog(): boolean {
    return this.shared !== undefined;
  }

  /** The installed snapshot (after every applied delta); undefined while the hub reads the log alone. */
  get snapshot(): Snapshot | undefined {
    return this.snapshotMirror.snapshot;
  }

  /** The session as it was when the hub was opened or later: what never changes of it (attributes, tenant, creation time). */
  get openedWith(): Snapshot | undefined {
    return this.snapshotMirror.snapshot ?? this.reading?.snapshot;
  }

  /** The sub-agents' activity lists as the session's activity channel has them now. */
  get subagentActivities(): SubagentActivitiesState | undefined {
    return this.snapshotMirror.activities;
  }

  get running(): boolean {
    if (this.reading) return this.reading.runningTurnIds.length > 0;
    return this.snapshot?.lifecycle === "running";
  }

  /** userHistoryEntryId of the running turn. */
  get activeTurnId(): string | undefined {
    const running = this.runningTurnIds;
    return running[running.length - 1];
  }

  /** userHistoryEntryIds of every turn Tau reports running (the active one and any settling). */
  get runningTurnIds(): string[] {
    return this.reading?.runningTurnIds ?? this.runningTurns.in(this.snapshot);
  }

  /** ISO-8601 creation time of the session. */
  get createdAt(): string | undefined {
    const snapshot = this.openedWith;
    return snapshot ? new Date(snapshot.createdAt).toISOString() : undefined;
  }

  /**
   * session.observe and install the baselines; the first attach emits session.created (seq 1). An
   * attach after a detach catches up like a resync.
   *
   * `follow: false` where another replica owns the host: the log alone, from the shared store,
   * and one `session.snapshot` for what never changes of the session, until `follow()`.
   */
  async attach(options: { follow?: boolean } = {}): Promise<void> {
    if (options.follow === false && this.logMirror && !this.translating) {
      const snapshot = await this.upstream.request("session.snapshot", { sessionId: this.sessionId });
      // A request naming a session subscribes the connection to its deltas (Tau v18: observation
      // semantics): undone, or every delta would still arrive to be parsed and dropped.
      // A refusal costs only those deltas (dropped unapplied), not the subscription.
      await this.upstream.request("session.unobserve", { sessionId: this.sessionId }).catch((error: unknown) => this.logLine("debug", "session.unobserve failed", { sessionId: this.sessionId, error: errorText(error) }));
      this.reading = new LogReading(this.log, snapshot);
      await this.logMirror.start();
      return;
    }
    await this.observe(async () => {
      await this.logMirror?.start();
    });
  }

  /**
   * Observes the session from now on if the hub read its log alone: whatever reads the session's
   * live state (its snapshot, whether a turn runs) on this replica waits for this first.
   */
  follow(): Promise<void> {
    if (!this.reading) return Promise.resolve();
    // A failed observe is tried again by the next caller that needs it.
    this.following ??= this.observe(async () => {
      await this.logMirror?.catchUp();
    }).finally(() => (this.following = undefined));
    return this.following;
  }

  private async observe(prepare: () => Promise<void>): Promise<void> {
    await this.snapshotMirror.attach(prepare);
    this.reading?.close();
    this.reading = undefined;
    // The history told at first sight is in the local log before anyone reads or follows it.
    if (this.shared && this.translating) await this.appended();
  }

  /** Another replica owns the host: the session's first events are the owner's to write; wait (bounded) until they are there. */
  async ownersFirstEvent(): Promise<void> {
    if (this.logMirror && !this.translating) await this.logMirror.waitForFirst(FIRST_EVENT_WAIT_MS);
  }

  /** Routes an upstream message of this session (client-tool messages are handled elsewhere). */
  handle(message: UpstreamServerMessage, from?: TauUpstream): void {
    this.snapshotMirror.handle(message, from);
  }

  /** After an upstream reconnect: observe again and report what happened while away. */
  async resync(): Promise<void> {
    await this.snapshotMirror.resync();
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
    this.logMirror?.stop();
    if (!this.reading) await this.snapshotMirror.detach();
  }

  /**
   * The Tau deltas (by toRevision) an event was translated from, while the log holds it; undefined
   * for a gateway event, an event of a resync, and with a shared log (whose seqs the store gives).
   * A Tau client observing the session received those very deltas: the inspector shows them under
   * the event.
   */
  deltaSource(seq: number): DeltaSource | undefined {
    return this.deltaSources.of(seq);
  }

  /**
   * `translated` events (what Tau did) go to a shared log only with this replica's fence, so a
   * replica that lost the host adds none; `gateway` events (notices, errors, interactions,
   * session.ended) come from whichever replica serves the request and are appended unfenced there.
   */
  private append(event: EventDraft, origin: "translated" | "gateway", key?: string, source?: DeltaSource): Event | undefined {
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
    const appended = (this.log.append as (type: Event["type"], payload: unknown) => Event)(event.type, event.payload);
    this.deltaSources.record(appended.seq, source);
    return appended;
  }

  private emitTranslated(event: EventDraft): void {
    this.streams.flush();
    this.append(event, "translated", undefined, this.deltaSources.current());
  }

  /** What the installed state's changes become: Ask events, through a translator that starts over with the state. */
  private translation(): SnapshotChanges {
    const translator = () => this.translator as DeltaTranslator;
    return {
      started: (snapshot, activities) => {
        this.translatorBehind = false;
        if (this.shared && this.log.newestSeq > 0) {
          // The shared log holds what another hub reported (another replica, or this one before it lost the host): continue it.
          this.translator = DeltaTranslator.resumingAfter(snapshot, this.log.read(this.log.oldestSeq - 1).events, activities);
          this.publish(this.translator.resync(snapshot));
          return;
        }
        this.translator = new DeltaTranslator(snapshot, activities);
        if (this.log.newestSeq > 0 || !this.translating) return;
        this.emitTranslated(draft("session.created", { sessionId: this.sessionId }));
        // What the session did before the gateway looked (through another Tau client, or before a
        // restart of a gateway whose log was in memory), told from the snapshot: the log holds the
        // whole conversation, and a turn still running continues live.
        this.publish(this.translator.history(snapshot, activities));
      },
      reset: (snapshot) => {
        if (!this.skipsTranslation()) this.publish(this.translatorBehind ? this.caughtUpResync(snapshot) : translator().resync(snapshot));
      },
      delta: (message, before, after) => {
        // Followed on every replica: whether a turn runs is read here whoever translates.
        this.runningTurns.applied(message, before, after);
        if (this.skipsTranslation()) return;
        if (this.translatorBehind) this.publish(this.caughtUpResync(before));
        this.deltaSources.translate(message.toRevision, () => this.publish(translator().delta(message, before, after)));
      },
      pending: (state) => this.publish(translator().pending(state)),
      ephemeral: (message, installed) => this.publish(translator().ephemeral(message, installed)),
      activities: (message) => this.publish(translator().activities(message)),
      activityState: (state) => this.publish(translator().activityState(state)),
      // client-tool messages belong to the interactions
      ignored: (message) => void (message.type satisfies IgnoredServerMessageType),
    };
  }

  /**
   * Whether this hub leaves the translation of a delta out: a replica that does not own the host
   * appends nothing it translates, so it does not translate (every replica observes every delta;
   * translating them all only to drop the events was the largest cost a replica adds per delta).
   */
  private skipsTranslation(): boolean {
    if (this.translating) return false;
    this.translatorBehind = true;
    return true;
  }

  /**
   * Translates again after skipped deltas (this replica owns the host again without observing
   * anew, e.g. a lease renewed after it had run out locally): a translator that continues the
   * shared log, as a takeover's, and the resync that reports what changed meanwhile.
   */
  private caughtUpResync(snapshot: Snapshot): EventDraft[] {
    this.translatorBehind = false;
    this.translator = DeltaTranslator.resumingAfter(snapshot, this.log.read(this.log.oldestSeq - 1).events, this.snapshotMirror.activities);
    return this.translator.resync(snapshot);
  }

  private publish(drafts: EventDraft[]): void {
    // Another replica owns the host and reports the session; this hub only keeps its snapshot current.
    if (!this.translating) return;
    for (const d of drafts) {
      if (isMergeable(d)) {
        // Flushed first when of another kind: the chunks waiting keep their own deltas.
        this.streams.add(d);
        this.deltaSources.chunkWaits();
      }
      else this.emitTranslated(d);
    }
  }
}
