import type { SessionSettingsStore } from "../store/session-settings.js";
import type { EventLog } from "./event-log.js";
import { sessionNotFound } from "./session-error.js";

/** What the coordination needs of a session's record to end it when another replica closed it. */
export interface ClosingSession {
  readonly sessionId: string;
  readonly hub: { readonly log: Pick<EventLog, "subscribe">; markEnded(): void; detach(): Promise<void> };
  readonly interactions: { cancelAll(reason: string): void };
}

export interface CloseCoordinationOptions {
  /** Where closes are shared with the other replicas (none without a shared store). */
  settings: SessionSettingsStore | undefined;
  /** Finished closes remembered (default DEFAULT_MAX_CLOSED_SESSIONS). */
  maxClosedSessions?: number;
  /** The record open for a session now, and how it is dropped once its close is done. */
  sessions: { get(sessionId: string): ClosingSession | undefined; forget(sessionId: string): void };
}

/** Finished closes remembered by default: the bound of the gateway's other per-session caches (the list facts, the `/tau` owners). */
export const DEFAULT_MAX_CLOSED_SESSIONS = 100_000;

/**
 * Which sessions of one registry are closing or closed, and, with replicas sharing a store, which
 * replica carries each close out (session-close.ts runs the close itself). A close begins here,
 * is claimed in the store — of two replicas closing at once only one goes ahead — and either
 * finishes or is abandoned; a session closed through another replica ends here once its
 * `session.ended` reaches the log, and one found closed in the store is closed here too.
 *
 * Tau cannot delete a session, so this mark, kept in the gateway process, is all that makes a
 * closed session answer -32004: refused from the moment its close starts. Finished closes are
 * remembered up to a bound; past it the oldest is forgotten, and that session reads again as the
 * idle Tau session it still is — as it does after a restart of the gateway. Closes in progress are
 * never forgotten.
 */
export class CloseCoordination {
  /** Sessions being closed. */
  private readonly closing = new Set<string>();
  /** Finished closes, oldest first (a Set keeps insertion order). */
  private readonly closed = new Set<string>();
  /** Sessions whose close this replica claimed in the shared store and is carrying out. */
  private readonly closingHere = new Set<string>();
  private readonly maxRemembered: number;

  constructor(private readonly options: CloseCoordinationOptions) {
    const max = (this.maxRemembered = options.maxClosedSessions ?? DEFAULT_MAX_CLOSED_SESSIONS);
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxClosedSessions must be a positive integer, got ${max}`);
  }

  /** Whether session/close has started for this session, or finished and is still remembered. */
  has(sessionId: string): boolean {
    return this.closing.has(sessionId) || this.closed.has(sessionId);
  }

  /** From now on every call naming the session is -32004 here; false if it was already closing or closed. */
  begin(sessionId: string): boolean {
    if (this.has(sessionId)) return false;
    this.closing.add(sessionId);
    return true;
  }

  /** Finished closes remembered now. */
  get remembered(): number {
    return this.closed.size;
  }

  /**
   * With replicas sharing a store, a begun close is claimed there: one replica closes a session,
   * and every replica opening it afterwards finds it closed. False when another replica claimed it
   * first: the session is left open here (its `session.ended` closes it here when it comes).
   */
  async claim(sessionId: string): Promise<boolean> {
    const store = this.options.settings;
    if (!store) return true;
    let claimed = false;
    try {
      claimed = await store.beginClose(sessionId);
    } finally {
      if (claimed) this.closingHere.add(sessionId);
      else this.closing.delete(sessionId);
    }
    return claimed;
  }

  /** The close failed before it changed anything: the session is open again (for every replica). */
  async abandon(sessionId: string): Promise<void> {
    this.closing.delete(sessionId);
    if (!this.closingHere.delete(sessionId)) return;
    await this.options.settings?.abandonClose(sessionId);
  }

  /** The close is done: the id stays closed, until `maxClosedSessions` newer closes have finished. */
  finish(sessionId: string): void {
    this.remember(sessionId);
    this.closingHere.delete(sessionId);
  }

  /** Which of `sessionIds` were closed through another replica (none without a shared store). */
  async closedElsewhere(sessionIds: readonly string[]): Promise<Set<string>> {
    const store = this.options.settings;
    return store ? store.closedAmong(sessionIds.filter((id) => !this.has(id))) : new Set();
  }

  /** A session found closed through another replica: remembered as closed here, and the error to answer with. */
  foundClosed(sessionId: string): Error {
    this.remember(sessionId);
    return sessionNotFound(sessionId);
  }

  /** A close finished (here or elsewhere): remembered as the newest, the oldest forgotten past the bound. */
  private remember(sessionId: string): void {
    this.closing.delete(sessionId);
    this.closed.delete(sessionId);
    this.closed.add(sessionId);
    if (this.closed.size > this.maxRemembered) this.closed.delete(this.closed.values().next().value!);
  }

  /**
   * Replicas sharing a store: a session closed through another replica ends here when its
   * `session.ended` reaches the log, as if closed here — once every listener (the subscribers
   * among them) has the event. Returns what stops it.
   */
  followClosesElsewhere(record: ClosingSession): () => void {
    const { sessionId, hub } = record;
    const { sessions } = this.options;
    return hub.log.subscribe((event) => {
      if (event.type !== "session.ended" || this.closingHere.has(sessionId)) return;
      queueMicrotask(() => {
        if (sessions.get(sessionId) !== record || this.closingHere.has(sessionId)) return;
        hub.markEnded();
        record.interactions.cancelAll("session closed");
        sessions.forget(sessionId);
        void hub.detach();
      });
    });
  }
}
