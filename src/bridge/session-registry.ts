import type { Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import { TauResponseError, type TauUpstream, type UpstreamServerMessage } from "../tau/upstream.js";
import { sessionNotFound } from "./session-error.js";
import { ClientToolRouting } from "./client-tool-routing.js";
import { CloseCoordination } from "./close-coordination.js";
import { HostTakeover, type SharedStoreOptions } from "./host-takeover.js";
import {
  SessionInteractions,
  type CommandToolConfig,
  type InteractionShare,
  type ReverseRequester,
  type SessionInteractionsOptions,
} from "./interactions/index.js";
import type { ApprovalPolicy } from "./interactions/policy/policy-rules.js";
import type { ReceiptSink, ReceiptWatch } from "./interactions/policy/receipts.js";
import { sessionMode, sessionTenant } from "./session-attributes.js";
import { SessionHub } from "./session-hub.js";
import { SendsInFlight } from "./sends-in-flight.js";
import type { Deciders, SessionPrincipal, SessionRoles } from "./session-roles.js";

/** How a record is opened: `follow: false` when only the session's event log is read (default: its live state too). */
export interface SessionUse {
  follow?: boolean;
}

/** A session the gateway began serving (its record was made), or one closed with session/close (its record dropped). */
export interface SessionsChange {
  readonly kind: "opened" | "closed";
  readonly sessionId: string;
  readonly tenant: string | undefined;
}

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
  /** The operator's approval policy (absent: the default, no rules). */
  approvalPolicy?: ApprovalPolicy;
  /** Where each command-tool call's finished receipt goes (`--audit`). */
  receiptSink?: ReceiptSink;
  /** Told every receipt as each step is added (the inspector's approvals panel). */
  receiptSteps?: ReceiptWatch;
  /** Who may decide the approvals a policy rule names the deciders of (the gateway's session roles). */
  roles?: Pick<SessionRoles, "mayDecide">;
  reverse: ReverseRequester;
  /** Where interactions are shared with the other replicas. */
  share: InteractionShare;
  /** Finished closes remembered (default DEFAULT_MAX_CLOSED_SESSIONS, see close-coordination.ts). */
  maxClosedSessions?: number;
  log?: Log;
}

/**
 * Owns one record per session the gateway has touched. Opening is memoised, so concurrent
 * requests share one `session.observe`; upstream messages for a session wait for its record and
 * are then handled in arrival order; client-tool messages go to the sessions' interactions
 * (client-tool-routing.ts).
 *
 * A session closed with session/close is gone for every Ask connection of this gateway: its record
 * is dropped and its id kept (up to a bound, close-coordination.ts), so opening it again, or any
 * call naming it, is -32004. Tau cannot delete a session and its attributes cannot change after
 * creation, so the mark lives here, in the gateway process (see docs/ask.md, session/close, on
 * what stays behind in Tau).
 */
export class SessionRegistry {
  private readonly records = new Map<string, Promise<SessionRecord>>();
  private readonly settled = new Map<string, SessionRecord>();
  /** Which sessions are closing or closed, here and through other replicas. */
  readonly closes: CloseCoordination;
  /** The client-tool channel of the bridge connection, routed to the sessions' interactions. */
  readonly clientTools: ClientToolRouting;
  /** What records dropped after a close had counted, so totals over all records never go down (the metrics are counters). */
  readonly retired = { eventsEmitted: 0, snapshotFetches: 0 };

  /** With a shared store: how sessions follow the host's lease. */
  private readonly takeover: HostTakeover | undefined;
  /** Told each time a record is made or dropped (a dialect announcing its lists of sessions). */
  private readonly changeListeners = new Set<(change: SessionsChange) => void>();

  constructor(private readonly options: SessionRegistryOptions) {
    this.closes = new CloseCoordination({ settings: options.shared?.store.settings, maxClosedSessions: options.maxClosedSessions, sessions: this });
    this.clientTools = new ClientToolRouting(this, options);
    this.takeover = options.shared && new HostTakeover(this, options.upstream, options.shared, options.log);
  }

  /**
   * The record of a session, observing it upstream the first time (Tau not_found → -32004).
   * `follow: false` (what reads only the session's event log, such as an Ask subscription): on a
   * replica that does not own the host, the hub reads the shared log without observing the
   * session until something opens it to follow (session-hub.ts, `follow`).
   */
  open(sessionId: string, use: SessionUse = {}): Promise<SessionRecord> {
    const record = this.opened(sessionId, use);
    if (use.follow === false) return record;
    return record.then(async (r) => {
      await r.hub.follow();
      return r;
    });
  }

  private opened(sessionId: string, use: SessionUse): Promise<SessionRecord> {
    if (this.closes.has(sessionId)) return Promise.reject(sessionNotFound(sessionId));
    let record = this.records.get(sessionId);
    if (!record) {
      record = this.create(sessionId, use);
      this.records.set(sessionId, record);
      record.then(
        (r) => {
          this.settled.set(sessionId, r);
          this.changed({ kind: "opened", sessionId, tenant: r.tenant });
          // The host changed hands while the record was being made: observe on the right connection.
          if (r.hub.upstream !== this.observingConnection) void this.takeover?.rebind(r);
        },
        () => this.records.delete(sessionId),
      );
    }
    return record;
  }

  /** The record, open or being opened; undefined when nothing has opened it yet. */
  opening(sessionId: string): Promise<SessionRecord> | undefined {
    return this.records.get(sessionId);
  }

  /** An open record the given tenant may see; -32004 otherwise (closed included), exactly like an unknown session. */
  async access(sessionId: string, tenant: string | undefined, use: SessionUse = {}): Promise<SessionRecord> {
    if (this.closes.has(sessionId)) throw sessionNotFound(sessionId);
    let record: SessionRecord;
    try {
      record = await this.open(sessionId, use);
    } catch (err) {
      // The same error, word for word, as for another tenant's session: an answer must not tell them apart.
      if (err instanceof TauResponseError && err.code === "not_found") throw sessionNotFound(sessionId);
      throw err;
    }
    // Closed while this call waited for the record.
    if (record.tenant !== tenant || this.closes.has(sessionId)) throw sessionNotFound(sessionId);
    return record;
  }

  /** Whether session/close has started (or finished) for this session. */
  isClosed(sessionId: string): boolean {
    return this.closes.has(sessionId);
  }

  /** The close is done: the record goes (the id stays closed). */
  forget(sessionId: string): void {
    this.closes.finish(sessionId);
    const record = this.settled.get(sessionId);
    if (record) {
      this.retired.eventsEmitted += record.hub.log.newestSeq;
      this.retired.snapshotFetches += record.hub.snapshotFetches;
    }
    record?.release?.();
    this.records.delete(sessionId);
    this.settled.delete(sessionId);
    this.takeover?.forget(sessionId);
    if (record) this.changed({ kind: "closed", sessionId, tenant: record.tenant });
  }

  /** Calls `listener` for every record made or dropped from now on; returns what stops it. */
  onChange(listener: (change: SessionsChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private changed(change: SessionsChange): void {
    for (const listener of this.changeListeners) listener(change);
  }

  get(sessionId: string): SessionRecord | undefined {
    return this.settled.get(sessionId);
  }

  all(): SessionRecord[] {
    return [...this.settled.values()];
  }

  /** The open records `tenant` may use (those access() gives it): what a count shown to the tenant counts. */
  visibleTo(tenant: string | undefined): SessionRecord[] {
    return this.all().filter((record) => record.tenant === tenant && !this.closes.has(record.sessionId));
  }

  /** Routes a message from a Tau connection (the bridge connection unless `from` says otherwise) to the session it names. */
  route(message: UpstreamServerMessage, from?: TauUpstream): void {
    if (message.type === "session.clientTool.call" || message.type === "session.clientTool.cancel") return this.clientTools.route(message);
    // A session being closed still hears its interrupted turn settle.
    if (this.closes.has(message.sessionId)) return this.settled.get(message.sessionId)?.hub.handle(message, from);
    void this.records.get(message.sessionId)?.then(
      (r) => r.hub.handle(message, from),
      () => undefined,
    );
  }

  /** After a connection came back (the bridge connection unless `connection` says otherwise): its hubs observe again and catch up. */
  async resyncAll(connection: TauUpstream = this.options.upstream): Promise<void> {
    const hubs = this.all().filter((r) => r.hub.upstream === connection);
    await Promise.all(hubs.map((r) => r.hub.resync().catch((err: unknown) => this.options.log?.("warn", "resync failed", { sessionId: r.sessionId, error: String(err) }))));
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

  private async create(sessionId: string, use: SessionUse): Promise<SessionRecord> {
    const store = this.options.shared?.store.settings;
    if (!store) return this.build(sessionId, use, undefined, []);
    // Listening before reading: a mode set in between is in what is read, or heard after it (the
    // last one heard before the record exists is taken in once it does).
    let record: SessionRecord | undefined;
    let heard: string | undefined;
    const stops = [await store.onModeSetElsewhere(sessionId, (mode) => (record ? record.interactions.modeSetElsewhere(mode) : (heard = mode)))];
    try {
      const stored = await store.read(sessionId);
      // Closed through another replica: gone here too, exactly as if it had been closed here.
      if (stored.closed) throw this.closes.foundClosed(sessionId);
      record = await this.build(sessionId, use, { store, stored }, stops);
      if (heard !== undefined) record.interactions.modeSetElsewhere(heard);
      return record;
    } catch (error) {
      stops.forEach((stop) => stop());
      throw error;
    }
  }

  /** A session's record; `stops` (what to stop when it is released) gets what the record sets going. */
  private async build(sessionId: string, use: SessionUse, settings: SessionInteractionsOptions["settings"], stops: Array<() => void>): Promise<SessionRecord> {
    const { upstream, retention, log, shared, share } = this.options;
    const sharedLog = shared && { store: shared.store.sessionLog(sessionId)!, ownership: shared.store.ownership, hostKey: shared.hostKey };
    const hub = new SessionHub({ sessionId, upstream: this.observingConnection, retention, log, shared: sharedLog });
    const [used] = await Promise.all([share.store.counters(share.hostKey, sessionId), hub.attach(use)]);
    // Closed through another replica while this one was opening it: its session.ended came with the log.
    if (shared && lastEventType(hub) === "session.ended") {
      void hub.detach();
      throw this.closes.foundClosed(sessionId);
    }
    // So that the owner observes and reports it (and a later owner finds it).
    await this.takeover?.announce(hub);
    const snapshot = hub.openedWith as Snapshot;
    const interactions = new SessionInteractions({
      sessionId,
      upstream,
      hub,
      mode: sessionMode(snapshot),
      ...(settings ? { settings } : {}),
      commandTools: this.options.commandTools,
      ...(this.options.approvalPolicy ? { policy: this.options.approvalPolicy } : {}),
      facts: { tenant: sessionTenant(snapshot), cwd: snapshot.executionEnvironment?.cwd },
      ...(this.options.receiptSink ? { receiptSink: this.options.receiptSink } : {}),
      ...(this.options.receiptSteps ? { receiptSteps: this.options.receiptSteps } : {}),
      deadlineMs: this.options.interactionDeadlineMs,
      ...(this.options.roles ? { mayDecide: (principal: SessionPrincipal, deciders: Deciders) => this.options.roles!.mayDecide(sessionId, principal, deciders) } : {}),
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
    if (shared) {
      const ownsHost = () => shared.store.ownership.owns(shared.hostKey);
      stops.push(this.clientTools.askRemotely(record, ownsHost), this.closes.followClosesElsewhere(record));
    }
    return record;
  }
}

function lastEventType(hub: SessionHub): string | undefined {
  const { newestSeq, oldestSeq } = hub.log;
  if (newestSeq < oldestSeq) return undefined; // nothing retained
  return hub.log.read(newestSeq - 1, 1).events[0]?.type;
}
