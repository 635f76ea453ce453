import type { Snapshot } from "../../generated/tau-v18.js";

/**
 * What a list shows of a session the gateway has not opened, read with `session.snapshot` and
 * kept: a digest of the snapshot (the facts a list needs, not the snapshot itself). Without it a
 * list cost one snapshot per such session, and a client listing in a loop kept the host busy
 * serialising snapshots.
 *
 * At most one read per session is in flight (concurrent lists share it). A digest is kept for
 * `freshForMs` (for good by default: facts fixed at creation), then read again when next asked
 * for. A session whose read fails is left out and read again only after a backoff that doubles
 * while it keeps failing (a host may list a session it cannot restore and answer not_found for it
 * every time).
 */

export interface SnapshotDigestOptions<T> {
  readSnapshot(sessionId: string): Promise<Snapshot>;
  digest(snapshot: Snapshot): T;
  /** How long a digest is used before it is read again; default: for good. */
  freshForMs?: number;
  /** Sessions whose digests are kept at most (oldest forgotten first); default 100,000. */
  maxKnown?: number;
  /** First wait after a failed read; default 1 s. */
  retryAfterMs?: number;
  /** Longest wait between reads of a session that keeps failing; default 5 min. */
  maxRetryAfterMs?: number;
  now?: () => number;
}

interface Failure {
  count: number;
  retryAt: number;
}

export class SnapshotDigests<T> {
  private readonly known = new Map<string, { digest: T; readAt: number }>();
  private readonly reads = new Map<string, Promise<T | undefined>>();
  private readonly failures = new Map<string, Failure>();
  private readonly freshForMs: number;
  private readonly maxKnown: number;
  private readonly retryAfterMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly now: () => number;
  /** `session.snapshot` requests sent (for the metrics). */
  snapshotReads = 0;

  constructor(private readonly options: SnapshotDigestOptions<T>) {
    this.freshForMs = options.freshForMs ?? Number.POSITIVE_INFINITY;
    this.maxKnown = options.maxKnown ?? 100_000;
    this.retryAfterMs = options.retryAfterMs ?? 1000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 5 * 60_000;
    this.now = options.now ?? Date.now;
  }

  /** The digest of a session; undefined when it cannot be read now (gone, or failing and backed off). */
  read(sessionId: string): Promise<T | undefined> {
    const known = this.known.get(sessionId);
    if (known && this.now() - known.readAt < this.freshForMs) return Promise.resolve(known.digest);
    const open = this.reads.get(sessionId);
    if (open) return open;
    const failure = this.failures.get(sessionId);
    if (failure && this.now() < failure.retryAt) return Promise.resolve(undefined);
    this.snapshotReads += 1;
    const read = this.options.readSnapshot(sessionId).then(
      (snapshot) => {
        this.failures.delete(sessionId);
        return this.remember(sessionId, this.options.digest(snapshot));
      },
      () => {
        this.failed(sessionId);
        return undefined;
      },
    );
    this.reads.set(sessionId, read);
    void read.finally(() => this.reads.delete(sessionId));
    return read;
  }

  private remember(sessionId: string, digest: T): T {
    this.known.delete(sessionId); // re-inserted last: the oldest read is forgotten first
    if (this.known.size >= this.maxKnown) this.known.delete(this.known.keys().next().value!);
    this.known.set(sessionId, { digest, readAt: this.now() });
    return digest;
  }

  private failed(sessionId: string): void {
    const count = (this.failures.get(sessionId)?.count ?? 0) + 1;
    const wait = Math.min(this.retryAfterMs * 2 ** (count - 1), this.maxRetryAfterMs);
    // Bounded like the digests: a failure forgotten early only means one read sooner.
    if (!this.failures.has(sessionId) && this.failures.size >= this.maxKnown) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(sessionId, { count, retryAt: this.now() + wait });
  }
}
