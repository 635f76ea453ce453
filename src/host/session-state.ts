import type {
  Change,
  DeltaCause,
  SessionDeltaMessage,
  SessionEphemeralMessage,
  SessionPendingUserMessagesMessage,
  SessionSubagentActivitiesMessage,
  Snapshot,
} from "../../generated/tau-v18.js";
import { applyChanges } from "../tau/delta-applier.js";

/** Everything a session streams to the connections subscribed to it. */
export type SessionStreamMessage =
  | SessionDeltaMessage
  | SessionPendingUserMessagesMessage
  | SessionSubagentActivitiesMessage
  | SessionEphemeralMessage;

export type StreamListener = (message: SessionStreamMessage) => void;

export interface SessionStateHooks {
  /** Called after every committed revision (persistence). */
  onChange(snapshot: Snapshot): void;
  /** Checks each delta as it is made (development mode); throws when it is invalid. */
  checkDelta?(message: SessionDeltaMessage, snapshot: Snapshot): void;
  log(line: string): void;
}

/**
 * The authoritative snapshot of one session and its subscribers. Every change goes through
 * `commit` (a patch built from Change objects and applied with the shared applier, so the host and
 * its clients derive state the same way) or `reset`, and is broadcast as the matching
 * `session.delta` with continuous revisions.
 */
export class SessionState {
  private current: Snapshot;
  private readonly listeners = new Set<StreamListener>();

  constructor(
    snapshot: Snapshot,
    private readonly hooks: SessionStateHooks,
  ) {
    this.current = snapshot;
  }

  get snapshot(): Snapshot {
    return this.current;
  }

  get sessionId(): string {
    return this.current.sessionId;
  }

  subscribe(listener: StreamListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Applies `changes` as one patch, advances the revision by one and broadcasts it. */
  commit(cause: DeltaCause, changes: Change[]): SessionDeltaMessage {
    if (changes.length === 0) throw new Error("a snapshot.patch needs at least one change");
    const next = applyChanges(this.current, changes);
    next.revision = this.current.revision + 1;
    return this.install(next, cause, { type: "snapshot.patch", changes });
  }

  /** Replaces the snapshot wholesale (compaction, rewind) at the next revision and broadcasts it. */
  reset(cause: DeltaCause, replacement: Omit<Snapshot, "revision">): SessionDeltaMessage {
    const next: Snapshot = { ...replacement, revision: this.current.revision + 1 } as Snapshot;
    return this.install(next, cause, { type: "snapshot.reset", snapshot: next });
  }

  /** Sends a non-snapshot stream message (pending input, ephemeral events) to every subscriber. */
  publish(message: SessionStreamMessage): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(message);
      } catch (err) {
        // One broken connection must not stop the others (the connection reports it itself).
        this.hooks.log(`session ${this.sessionId}: delivering ${message.type} failed: ${(err as Error).message}`);
      }
    }
  }

  /** Makes `next` the current snapshot and broadcasts the delta that leads to it from the current one. */
  private install(next: Snapshot, cause: DeltaCause, delta: SessionDeltaMessage["delta"]): SessionDeltaMessage {
    const message: SessionDeltaMessage = {
      version: 18,
      type: "session.delta",
      sessionId: this.sessionId,
      fromRevision: this.current.revision,
      toRevision: next.revision,
      cause,
      delta,
    };
    this.hooks.checkDelta?.(message, next);
    this.current = next;
    this.hooks.onChange(next);
    this.publish(message);
    return message;
  }
}
