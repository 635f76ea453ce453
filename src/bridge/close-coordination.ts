import type { SessionSettingsStore } from "../store/session-settings.js";
import { ClosedSessions } from "./closed-sessions.js";
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
  /** Finished closes remembered (default DEFAULT_MAX_CLOSED_SESSIONS, see closed-sessions.ts). */
  maxClosedSessions?: number;
  /** The record open for a session now, and how it is dropped once its close is done. */
  sessions: { get(sessionId: string): ClosingSession | undefined; forget(sessionId: string): void };
}

/**
 * Which sessions of one registry are closing or closed, and, with replicas sharing a store, which
 * replica carries each close out (session-close.ts runs the close itself). A close begins here,
 * is claimed in the store — of two replicas closing at once only one goes ahead — and either
 * finishes or is abandoned; a session closed through another replica ends here once its
 * `session.ended` reaches the log, and one found closed in the store is closed here too.
 */
export class CloseCoordination {
  /** Sessions being closed (refused from the moment close starts) and closed ones. */
  private readonly closed: ClosedSessions;
  /** Sessions whose close this replica claimed in the shared store and is carrying out. */
  private readonly closingHere = new Set<string>();

  constructor(private readonly options: CloseCoordinationOptions) {
    this.closed = new ClosedSessions(options.maxClosedSessions);
  }

  /** Whether session/close has started (or finished) for this session. */
  has(sessionId: string): boolean {
    return this.closed.has(sessionId);
  }

  /** From now on every call naming the session is -32004 here; false if it was already closing or closed. */
  begin(sessionId: string): boolean {
    return this.closed.begin(sessionId);
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
      else this.closed.abandon(sessionId);
    }
    return claimed;
  }

  /** The close failed before it changed anything: the session is open again (for every replica). */
  async abandon(sessionId: string): Promise<void> {
    this.closed.abandon(sessionId);
    if (!this.closingHere.delete(sessionId)) return;
    await this.options.settings?.abandonClose(sessionId);
  }

  /** The close is done: the id stays closed. */
  finish(sessionId: string): void {
    this.closed.finish(sessionId);
    this.closingHere.delete(sessionId);
  }

  /** Which of `sessionIds` were closed through another replica (none without a shared store). */
  async closedElsewhere(sessionIds: readonly string[]): Promise<Set<string>> {
    const store = this.options.settings;
    return store ? store.closedAmong(sessionIds.filter((id) => !this.closed.has(id))) : new Set();
  }

  /** A session found closed through another replica: remembered as closed here, and the error to answer with. */
  foundClosed(sessionId: string): Error {
    this.closed.finish(sessionId);
    return sessionNotFound(sessionId);
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
