import type { Snapshot } from "../../generated/tau-v18.js";
import { SnapshotDigests } from "./snapshot-digests.js";

/** Where a listed session's snapshot comes from: an open session's hub, else the host (bridge-core.ts). */
export interface ListedSnapshotSource {
  readonly hosts: { request(method: "session.snapshot", params: { sessionId: string }): Promise<Snapshot> };
  readonly sessions: { get(sessionId: string): { readonly hub: { readonly snapshot: Snapshot | undefined } } | undefined };
}

/**
 * How long a listed session's digest is used before its snapshot is read again: a session the
 * gateway does not hold open changes only through other clients, and a client listing in a loop
 * must not cost the host a snapshot per session per call.
 */
export const LISTED_SESSION_FRESH_MS = 5_000;

/**
 * What a dialect's list shows of each session, as a digest of its snapshot: an open session's from
 * its live snapshot, any other's read at most once per LISTED_SESSION_FRESH_MS (snapshot-digests.ts).
 */
export class ListedSessions<T> {
  private readonly reads: SnapshotDigests<T>;

  constructor(
    private readonly core: ListedSnapshotSource,
    private readonly digestOf: (snapshot: Snapshot) => T,
  ) {
    this.reads = new SnapshotDigests({
      readSnapshot: (sessionId) => core.hosts.request("session.snapshot", { sessionId }),
      digest: digestOf,
      freshForMs: LISTED_SESSION_FRESH_MS,
    });
  }

  /** `session.snapshot` requests sent for lists. */
  get snapshotReads(): number {
    return this.reads.snapshotReads;
  }

  /** The session's digest; undefined when it cannot be read now (gone, or failing and backed off). */
  digest(sessionId: string): Promise<T | undefined> {
    const open = this.core.sessions.get(sessionId)?.hub.snapshot;
    if (open) return Promise.resolve(this.digestOf(open));
    return this.reads.read(sessionId);
  }
}
