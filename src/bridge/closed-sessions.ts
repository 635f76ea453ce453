/**
 * Which sessions session/close has taken away from the Ask side of this gateway: those being
 * closed (refused from the moment the close starts) and those closed. Tau cannot delete a session,
 * so this mark, kept in the gateway process, is all that makes a closed session answer -32004.
 *
 * Finished closes are remembered up to a bound, as the gateway's other per-session caches are
 * (the list facts, the `/tau` owners); past it the oldest close is forgotten, and that session
 * reads again as the idle Tau session it still is — as it does after a restart of the gateway.
 * Closes in progress are never forgotten.
 */

/** Finished closes remembered by default. */
export const DEFAULT_MAX_CLOSED_SESSIONS = 100_000;

export class ClosedSessions {
  private readonly closing = new Set<string>();
  /** Finished closes, oldest first (a Set keeps insertion order). */
  private readonly closed = new Set<string>();

  constructor(private readonly maxRemembered = DEFAULT_MAX_CLOSED_SESSIONS) {
    if (!Number.isSafeInteger(maxRemembered) || maxRemembered < 1) throw new RangeError(`maxRemembered must be a positive integer, got ${maxRemembered}`);
  }

  /** Whether a close has started, or finished and is still remembered. */
  has(sessionId: string): boolean {
    return this.closing.has(sessionId) || this.closed.has(sessionId);
  }

  /** Starts a close; false if the session is already closing or closed. */
  begin(sessionId: string): boolean {
    if (this.has(sessionId)) return false;
    this.closing.add(sessionId);
    return true;
  }

  /** A close that failed before it changed anything: the session is open again. */
  abandon(sessionId: string): void {
    this.closing.delete(sessionId);
  }

  /** The close is done; remembered until `maxRemembered` newer closes have finished. */
  finish(sessionId: string): void {
    this.closing.delete(sessionId);
    this.closed.delete(sessionId);
    this.closed.add(sessionId);
    if (this.closed.size > this.maxRemembered) this.closed.delete(this.closed.values().next().value!);
  }

  /** Finished closes remembered now. */
  get size(): number {
    return this.closed.size;
  }
}
