/**
 * What replicas share about a session beyond its log: how its command tools are gated now, the
 * tools it granted for the whole session, and whether session/close has taken it away. A session's
 * creation mode is recorded on the Tau session itself (immutable attributes); this holds what
 * changed after that, so the replica that owns the session's host decides with it whichever
 * replica the change came through, and a later owner still knows it.
 *
 * Only a store shared by several replicas has one: a single process keeps all of this in its
 * session records.
 */
export interface SessionSettings {
  /** The approval mode set after creation (undefined: the one recorded on the Tau session holds). */
  readonly mode?: string;
  /** Command tools granted for the whole session. */
  readonly grants: readonly string[];
  /** session/close has begun (or finished) on some replica. */
  readonly closed: boolean;
}

export interface SessionSettingsStore {
  read(sessionId: string): Promise<SessionSettings>;
  setMode(sessionId: string, mode: string): Promise<void>;
  /**
   * Calls `listener` with each mode set for the session through another replica, as it is set (and
   * with the stored mode after the store connection came back, as changes meanwhile went unheard).
   * Resolves with the unsubscribe once listening.
   */
  onModeSetElsewhere(sessionId: string, listener: (mode: string) => void): Promise<() => void>;
  grant(sessionId: string, toolName: string): Promise<void>;
  /** Marks the session closed; false when it already was (a close on any replica, begun or done). */
  beginClose(sessionId: string): Promise<boolean>;
  /** A close that failed before it changed anything: the session is open again. */
  abandonClose(sessionId: string): Promise<void>;
  /** Which of `sessionIds` are closed. */
  closedAmong(sessionIds: readonly string[]): Promise<Set<string>>;
}
