import type { SessionClientToolCallMessage, Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import type { InteractionAnswer } from "../store/interactions.js";
import type { SessionSettingsStore } from "../store/session-settings.js";
import { TauResponseError, type TauUpstream, type UpstreamServerMessage } from "../tau/upstream.js";
import { sessionNotFound } from "./session-error.js";
import { ClosedSessions } from "./closed-sessions.js";
import { HostTakeover, type SharedStoreOptions } from "./host-takeover.js";
import {
  RemoteAsking,
  SessionInteractions,
  type CommandToolConfig,
  type InteractionShare,
  type ReverseRequester,
  type SessionInteractionsOptions,
} from "./interactions/index.js";
import { sessionMode, sessionTenant } from "./session-attributes.js";
import { SessionHub } from "./session-hub.js";
import { SendsInFlight } from "./sends-in-flight.js";

/** A session the gateway serves: its hub (snapshot, translator, event log) and its interactions. */
export interface SessionRecord {
  readonly sessionId: string;
  readonly hub: SessionHub;
  readonly interactions: SessionInteractions;
  readonly tenant: string | undefined;
  /** session/send calls on their way upstream, which session/close waits for. */
  readonly sends: SendsInFlight;
  /** Stops what the record set going (asking this replica's clients about other replicas' interactions). */
  readonly release?: () => void;
}

export interface SessionRegistryOptions {
  /** The bridge connection (the one advertising the gateway's client tools). */
  upstream: TauUpstream;
  /** Replicas sharing a store: hubs append only while this replica owns the host. */
  shared?: SharedStoreOptions;
  retention?: number;
  interactionDeadlineMs: number;
  commandTools: CommandToolConfig[];
  reverse: ReverseRequester;
  /** Where interactions are shared with the other replicas. */
  share: InteractionShare;
  /** Finished closes remembered (default DEFAULT_MAX_CLOSED_SESSIONS, see closed-sessions.ts). */
  maxClosedSessions?: number;
  log?: Log;
}

/**
 * Owns one record per session the gateway has touched. Opening is memoised, so concurrent
 * requests share one `session.observe`; upstream messages for a session wait for its record and
 * are then handled in arrival order.
 *
 * A session closed with session/close is gone for every Ask connection of this gateway: its record
 * is dropped and its id kept (up to a bound, closed-sessions.ts), so opening it again, or any call
 * naming it, is -32004. Tau cannot delete a session and its attributes cannot change after
 * creation, so the mark lives here, in the gateway process (see docs/ask.md, session/close, on what stays
 * behind in Tau).
 */
export class SessionRegistry {
  private readonly records = new Map<string, Promise<SessionRecord>>();
  private readonly settled = new Map<string, SessionRecord>();
  /** Sessions being closed (refused from the moment close starts) and closed ones. */
  private readonly closed: ClosedSessions;
  /** What records dropped after a close had counted, so totals over all records never go down (the metrics are counters). */
  readonly retired = { eventsEmitted: 0, snapshotFetches: 0 };

  /** With a shared store: how sessions follow the host's lease. */
  private readonly takeover: HostTakeover | undefined;
  /** Sessions whose close this replica claimed in the shared store and is carrying out. */
  private readonly closingHere = new Set<string>();

  constructor(private readonly options: SessionRegistryOptions) {
    this.closed = new ClosedSessions(options.maxClosedSessions);
    this.takeover = options.shared && new HostTakeover(this, options.upstream, options.shared, options.log);
  }

  /** The record of a session, observing it upstream the first time (Tau not_found → -32004). */
  open(sessionId: string): Promise<SessionRecord> {
    if (this.closed.has(sessionId)) return Promise.reject(sessionNotFound(sessionId));
    let record = this.records.get(sessionId);
    if (!record) {
      record = this.create(sessionId);
      this.records.set(sessionId, record);
      record.then(
        (r) => {
          this.settled.set(sessionId, r);
          // The host changed hands while the record was being made: observe on the right connection.
          if (r.hub.upstream !== this.observingConnection) void this.takeover?.rebind(r);
        },
        () => this.records.delete(sessionId),
      );
    }
    return record;
  }

  /** An open record the given tenant may see; -32004 otherwise (closed included), exactly like an unknown session. */
  async access(sessionId: string, tenant: string | undefined): Promise<SessionRecord> {
    if (this.closed.has(sessionId)) throw sessionNotFound(sessionId);
    let record: SessionRecord;
    try {
      record = await this.open(sessionId);
    } catch (err) {
      // The same error, word for word, as for another tenant's session: an answer must not tell them apart.
      if (err instanceof TauResponseError && err.code === "not_found") throw sessionNotFound(sessionId);
      throw err;
    }
    // Closed while this call waited for the record.
    if (record.tenant !== tenant || this.closed.has(sessionId)) throw sessionNotFound(sessionId);
    return record;
  }

  /** Whether session/close has started (or finished) for this session. */
  isClosed(sessionId: string): boolean {
    return this.closed.has(sessionId);
  }

  /** From now on every call naming the session is -32004 here; false if it was already closing or closed. */
  beginClose(sessionId: string): boolean {
    return this.closed.begin(sessionId);
  }

  /**
   * With replicas sharing a store, a begun close is claimed there: one replica closes a session,
   * and every replica opening it afterwards finds it closed. False when another replica claimed it
   * first: the session is left open here (its `session.ended` closes it here when it comes).
   */
  async claimClose(sessionId: string): Promise<boolean> {
    const store = this.settingsStore;
    if (!store) return true;
    let claimed = false;
    try {
      claimed = await store.beginClose(sessionId);
    } finally {
      if (claimed) this.closingHere.add(sessionId);
      else this.closed.abandon(sessionId);
    }
    return claimed;
  }

  /** The close failed before it changed anything: the session is open again (for every replica). */
  async abandonClose(sessionId: string): Promise<void> {
    this.closed.abandon(sessionId);
    if (!this.closingHere.delete(sessionId)) return;
    await this.settingsStore?.abandonClose(sessionId);
  }

  /** Which of `sessionIds` were closed through another replica (none without a shared store). */
  async closedElsewhere(sessionIds: readonly string[]): Promise<Set<string>> {
    const store = this.settingsStore;
    return store ? store.closedAmong(sessionIds.filter((id) => !this.closed.has(id))) : new Set();
  }

  /** The close is done: the record goes (the id stays closed). */
  forget(sessionId: string): void {
    this.closed.finish(sessionId);
    this.closingHere.delete(sessionId);
    const record = this.settled.get(sessionId);
    if (record) {
      this.retired.eventsEmitted += record.hub.log.newestSeq;
      this.retired.snapshotFetches += record.hub.snapshotFetches;
    }
    record?.release?.();
    this.records.delete(sessionId);
    this.settled.delete(sessionId);
    this.takeover?.forget(sessionId);
  }

  get(sessionId: string): SessionRecord | undefined {
    return this.settled.get(sessionId);
  }

  all(): SessionRecord[] {
    return [...this.settled.values()];
  }

  /** Routes a message from a Tau connection (the bridge connection unless `from` says otherwise) to the session it names. */
  route(message: UpstreamServerMessage, from?: TauUpstream): void {
    if (this.closed.has(message.sessionId)) {
      // No new interaction opens in a session being closed or closed (a /tau client's turn may
      // still call our tools there); a session being closed still hears its interrupted turn settle.
      const closing = this.settled.get(message.sessionId);
      if (message.type === "session.clientTool.call") this.refuseCall(message);
      else if (message.type === "session.clientTool.cancel") closing?.interactions.onCancel(message);
      else closing?.hub.handle(message, from);
      return;
    }
    const record = this.records.get(message.sessionId);
    // The bridge connection only receives messages for sessions it named; a client-tool call for
    // one it has not opened yet (e.g. only listed) still deserves an answer, so open it.
    const target = record ?? (message.type === "session.clientTool.call" ? this.open(message.sessionId) : undefined);
    if (!target) return;
    void target.then(
      (r) => {
        if (message.type === "session.clientTool.call") r.interactions.onCall(message);
        else if (message.type === "session.clientTool.cancel") r.interactions.onCancel(message);
        else r.hub.handle(message, from);
      },
      () => undefined,
    );
  }

  /**
   * An answer that won in the store, for the session it belongs to (opened here if this replica
   * has not served it yet: it takes the call over). True once Tau has the result or needs none,
   * false when it must be delivered again later.
   */
  deliver(answer: InteractionAnswer): Promise<boolean> {
    const { sessionId } = answer.interaction;
    // An open record first, without waiting: in one process the answer is carried out within the call that decided it.
    const record = this.settled.get(sessionId);
    if (record) return record.interactions.deliver(answer);
    // Closed here: Tau has been told the session's calls are over.
    if (this.closed.has(sessionId)) return Promise.resolve(true);
    return this.open(sessionId).then(
      (r) => r.interactions.deliver(answer),
      // Gone upstream: nobody can take the result any more. Unreachable: try again later.
      (err: unknown) => err instanceof TauResponseError && err.code === "not_found",
    );
  }

  /** This replica now owns the host: the sessions it serves number new interactions after the ones used elsewhere. */
  async catchUpInteractionNumbers(): Promise<void> {
    await Promise.all(
      this.all().map((r) => r.interactions.catchUpNumbers().catch((err: unknown) => this.options.log?.("warn", "reading interaction numbers failed", { sessionId: r.sessionId, error: String(err) }))),
    );
  }

  /** After a connection came back (the bridge connection unless `connection` says otherwise): its hubs observe again and catch up. */
  async resyncAll(connection: TauUpstream = this.options.upstream): Promise<void> {
    const hubs = this.all().filter((r) => r.hub.upstream === connection);
    await Promise.all(hubs.map((r) => r.hub.resync().catch((err: unknown) => this.options.log?.("warn", "resync failed", { sessionId: r.sessionId, error: String(err) }))));
  }

  /** The bridge connection dropped: Tau forgets our client-tool calls, so their interactions end. */
  cancelAllInteractions(reason: string): void {
    for (const r of this.all()) r.interactions.cancelAll(reason);
  }

  /** A call into a session closed on this gateway: acked and failed, so the turn does not wait for it. */
  private refuseCall(message: SessionClientToolCallMessage): void {
    const { sessionId, callId } = message;
    const { upstream, log } = this.options;
    void upstream
      .request("session.clientTool.ack", { sessionId, callId })
      .then((ack) => {
        if (!ack.accepted) return;
        return upstream.request("session.clientTool.result", { sessionId, callId, ok: false, error: "the session was closed on tau-gateway; its tools no longer answer" });
      })
      .catch((error: unknown) => log?.("debug", "refusing a client-tool call of a closed session failed", { sessionId, callId, error: String(error) }));
  }

  /** The connection hubs observe on: the bridge connection while this replica owns the host (always without a shared store). */
  private get observingConnection(): TauUpstream {
    return this.takeover?.observingConnection ?? this.options.upstream;
  }

  /** This replica gained or lost the lease on the host (see HostTakeover). */
  async hostOwnershipChanged(owned: boolean): Promise<void> {
    await this.takeover?.ownershipChanged(owned);
  }

  /** Another replica announced a session of the host: its owner observes and reports it. */
  async adopt(sessionId: string): Promise<void> {
    await this.takeover?.adopt(sessionId);
  }

  /**
   * Replicas sharing a store: interactions the host's owner opens reach this replica as events;
   * its clients are asked about them too (remote-asking.ts). Returns what stops it.
   */
  private askRemotely(hub: SessionHub, interactions: SessionInteractions, shared: SharedStoreOptions): () => void {
    const { store, hostKey } = shared;
    const remote = new RemoteAsking(hub.sessionId, this.options.reverse, interactions.shared, () => store.ownership.owns(hostKey), this.options.log);
    const unsubscribe = hub.log.subscribe((event) => remote.onEvent(event));
    return () => {
      unsubscribe();
      remote.close();
    };
  }

  /**
   * Replicas sharing a store: a session closed through another replica ends here when its
   * `session.ended` reaches the log, as if closed here — once every listener (the subscribers
   * among them) has the event. Returns what stops it.
   */
  private followClosesElsewhere(record: SessionRecord): () => void {
    const { sessionId, hub } = record;
    return hub.log.subscribe((event) => {
      if (event.type !== "session.ended" || this.closingHere.has(sessionId)) return;
      queueMicrotask(() => {
        if (this.settled.get(sessionId) !== record || this.closingHere.has(sessionId)) return;
        hub.markEnded();
        record.interactions.cancelAll("session closed");
        this.forget(sessionId);
        void hub.detach();
      });
    });
  }

  /** A session found closed through another replica: remembered as closed here, and the error to answer with. */
  private foundClosed(sessionId: string): Error {
    this.closed.finish(sessionId);
    return sessionNotFound(sessionId);
  }

  /** Where mode changes, grants and closes are shared with the other replicas (none without a shared store). */
  private get settingsStore(): SessionSettingsStore | undefined {
    return this.options.shared?.store.settings;
  }

  private async create(sessionId: string): Promise<SessionRecord> {
    const store = this.settingsStore;
    if (!store) return this.build(sessionId, undefined, []);
    // Listening before reading: a mode set in between is in what is read, or heard after it (the
    // last one heard before the record exists is taken in once it does).
    let record: SessionRecord | undefined;
    let heard: string | undefined;
    const stops = [await store.onModeSetElsewhere(sessionId, (mode) => (record ? record.interactions.modeSetElsewhere(mode) : (heard = mode)))];
    try {
      const stored = await store.read(sessionId);
      // Closed through another replica: gone here too, exactly as if it had been closed here.
      if (stored.closed) throw this.foundClosed(sessionId);
      record = await this.build(sessionId, { store, stored }, stops);
      if (heard !== undefined) record.interactions.modeSetElsewhere(heard);
      return record;
    } catch (error) {
      stops.forEach((stop) => stop());
      throw error;
    }
  }

  /** A session's record; `stops` (what to stop when it is released) gets what the record sets going. */
  private async build(sessionId: string, settings: SessionInteractionsOptions["settings"], stops: Array<() => void>): Promise<SessionRecord> {
    const { upstream, retention, log, shared, share } = this.options;
    const sharedLog = shared && { store: shared.store.sessionLog(sessionId)!, ownership: shared.store.ownership, hostKey: shared.hostKey };
    const hub = new SessionHub({ sessionId, upstream: this.observingConnection, retention, log, shared: sharedLog });
    const [used] = await Promise.all([share.store.counters(share.hostKey, sessionId), hub.attach()]);
    // Closed through another replica while this one was opening it: its session.ended came with the log.
    if (shared && lastEventType(hub) === "session.ended") {
      void hub.detach();
      throw this.foundClosed(sessionId);
    }
    // So that the owner observes and reports it (and a later owner finds it).
    await this.takeover?.announce(hub);
    const snapshot = hub.snapshot as Snapshot;
    const interactions = new SessionInteractions({
      sessionId,
      upstream,
      hub,
      mode: sessionMode(snapshot),
      ...(settings ? { settings } : {}),
      commandTools: this.options.commandTools,
      deadlineMs: this.options.interactionDeadlineMs,
      reverse: this.options.reverse,
      share,
      used,
      log,
    });
    const record: SessionRecord = {
      sessionId,
      hub,
      interactions,
      tenant: sessionTenant(snapshot),
      sends: new SendsInFlight(),
      ...(shared ? { release: () => stops.forEach((stop) => stop()) } : {}),
    };
    if (shared) stops.push(this.askRemotely(hub, interactions, shared), this.followClosesElsewhere(record));
    return record;
  }
}

function lastEventType(hub: SessionHub): string | undefined {
  const { newestSeq, oldestSeq } = hub.log;
  if (newestSeq < oldestSeq) return undefined; // nothing retained
  return hub.log.read(newestSeq - 1, 1).events[0]?.type;
}
