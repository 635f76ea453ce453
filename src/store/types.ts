import type { InteractionStore } from "./interactions.js";
import type { HostOwnership } from "./ownership.js";
import type { PlacementStore } from "./placement.js";
import type { RecalledOutcomes } from "./recalled-outcomes.js";
import type { SessionRoleStore } from "./session-roles.js";
import type { SessionSettingsStore } from "./session-settings.js";
import type { SharedRecords } from "./shared-records.js";

export type { HostOwnership } from "./ownership.js";
export type { SessionSettings, SessionSettingsStore } from "./session-settings.js";
export type { SessionRole, SessionRoleRecord, SessionRoleStore } from "./session-roles.js";
export type { RecallClaim, RecalledOutcomes, SharedOutcome } from "./recalled-outcomes.js";
export type { SharedRecords } from "./shared-records.js";

/**
 * What gateway replicas share (the store layer): one sequenced event log per session, written by
 * the replica that holds the lease on the session's Tau host, and those leases. With the memory
 * store a single process is everything: it owns every host and keeps its logs itself.
 */

/** An event as the store keeps it: its session seq, its type and its payload (opaque here). */
export interface StoredEvent {
  seq: number;
  type: string;
  payload: unknown;
}

/** An event to append: the store gives it its seq. */
export interface EventToAppend {
  type: string;
  payload: unknown;
}

export type AppendOutcome =
  /** Appended: the events got `firstSeq`…`lastSeq` in log `epoch`. */
  | { status: "appended"; epoch: string; firstSeq: number; lastSeq: number; events: StoredEvent[]; newEpoch: boolean }
  /**
   * The same idempotency key was appended before: nothing was added; `lastSeq` is the last seq it
   * got (its first is not kept: a batch that began a new epoch got one more seq, the reset's).
   */
  | { status: "duplicate"; epoch: string; lastSeq: number }
  /** The fence is not the one of the host's current lease: nothing was added. */
  | { status: "fenced" }
  /** An unfenced batch for a log that does not exist (unfenced appends never begin a log): nothing was added. */
  | { status: "missing" };

/** What one session log looks like now. `epoch` undefined: the log does not exist (never written, or lost). */
export interface LogInfo {
  epoch: string | undefined;
  newestSeq: number;
  /** The oldest retained seq; newestSeq + 1 when nothing is retained. */
  oldestSeq: number;
}

/** A batch as replicas hear it live. */
export interface LiveBatch {
  epoch: string;
  events: StoredEvent[];
}

/**
 * One session's log in the store: appends are fenced by the host lease and idempotent, seqs are
 * allocated by the store (never by a replica), and the log has an epoch that changes whenever its
 * history was lost (flushed, expired, deleted), so readers can tell a gap from a new beginning.
 */
export interface SessionLogStore {
  readonly sessionId: string;
  /**
   * Appends `events` in order as one batch. `fence` is the lease counter of the session's host
   * (see HostOwnership.fence), refused unless it is the current lease's; without one the batch is
   * appended unfenced (gateway events of a replica that does not own the host); `key` identifies the batch so that sending it again adds nothing;
   * `knownEpoch` is the epoch the appender last saw: when the log is gone, the store begins a new
   * epoch with `session.reset {cause:"resync"}` before the batch.
   */
  append(events: EventToAppend[], options: { hostKey: string; fence: number | undefined; key: string; knownEpoch?: string }): Promise<AppendOutcome>;
  /** Retained events with seq > afterSeq, oldest first, at most `limit`. */
  read(afterSeq: number, limit?: number): Promise<StoredEvent[]>;
  info(): Promise<LogInfo>;
  /**
   * Live batches appended by any replica, in the order the store published them; `reconnected`
   * after the store connection came back (batches published meanwhile are not heard: catch up
   * with read). Returns the unsubscribe.
   */
  subscribe(listener: LiveListener): Promise<() => void>;
}

/** Hears a session log's live batches (SessionLogStore.subscribe). */
export interface LiveListener {
  batch(batch: LiveBatch): void;
  reconnected(): void;
  /** Whether the listener holds every event of the batch ending at `lastSeq` in `epoch` already: then it is not handed over (nor parsed). */
  has?(epoch: string, lastSeq: number): boolean;
}

/**
 * Leases with fencing counters, one per Tau host: what the bridge reads (ownership.ts), and
 * competing for them.
 */
export interface HostLeases extends HostOwnership {
  /** Starts competing for the host's lease (memory: owned at once). */
  claim(hostKey: string): void;
  /** How many hosts' leases this replica holds now. */
  ownedCount(): number;
}

/** Sessions known per Tau host, so that a new owner of the host finds every one of them. */
export interface HostSessions {
  /** Records the session as one of the host's and asks the owner to observe it. */
  announce(hostKey: string, sessionId: string): Promise<void>;
  /** Every session recorded for the host. */
  list(hostKey: string): Promise<string[]>;
  /** Called when any replica announces a session of the host; returns the unsubscribe. */
  onAnnounce(hostKey: string, listener: (sessionId: string) => void): Promise<() => void>;
  /** The session is gone for good (closed): no longer one of the host's. */
  forget(hostKey: string, sessionId: string): Promise<void>;
}

/** Per-replica figures for /metrics. */
export interface StoreStats {
  appends: number;
  appendSeconds: number;
  appendsFenced: number;
  resumesRecovered: number;
  resumesReset: number;
}

export interface GatewayStore {
  readonly kind: "memory" | "redis";
  /** Random per process. */
  readonly replicaId: string;
  /** The session's shared log; undefined with the memory store, where the process's own event log is the log. */
  sessionLog(sessionId: string): SessionLogStore | undefined;
  readonly ownership: HostLeases;
  /** Which host each session lives on, with several Tau hosts. */
  readonly placement: PlacementStore;
  /** Pending interactions and their answers. */
  readonly interactions: InteractionStore;
  /** Mode changes, grants and closes of sessions; undefined with the memory store (the session records hold them). */
  readonly settings: SessionSettingsStore | undefined;
  /** Each session's owner and granted roles (memory: this process's own). */
  readonly roles: SessionRoleStore;
  /** Prompts' outcomes by their idempotency key, for a repeat on another replica; undefined with the memory store (the process remembers them). */
  readonly recalls: RecalledOutcomes | undefined;
  /** Expiring records replicas tell each other about; undefined with the memory store (one process knows them). */
  readonly records: SharedRecords | undefined;
  /** Sessions per host; undefined with the memory store (one process sees them all). */
  readonly hostSessions: HostSessions | undefined;
  readonly stats: StoreStats;
  /** /readyz: false when the store is unreachable. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}
