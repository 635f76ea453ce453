import type { DeltaCause, SessionDeltaMessage, Snapshot } from "../../generated/tau-v18.js";
import { applyChanges, type ApplyOptions } from "./delta-changes.js";
import { DeltaGapError, InvalidDeltaError } from "./delta-errors.js";
import { checkSnapshotInvariants } from "./delta-invariants.js";

/**
 * Applies one `session.delta` to an installed snapshot (spec §6.2, the behaviour of Tau's own
 * `applySessionProtocolDelta`). Pure: the installed snapshot is never modified, so a caller that
 * catches an error still holds its last good state and resynchronises with `session.snapshot`.
 */

export { applyChanges, type ApplyOptions } from "./delta-changes.js";
export { DeltaGapError, InvalidDeltaError } from "./delta-errors.js";
export { checkSnapshotInvariants } from "./delta-invariants.js";

export type ApplyOutcome = { status: "applied"; snapshot: Snapshot } | { status: "stale"; snapshot: Snapshot };

/**
 * Pure: `snapshot` keeps its value; returns the new snapshot (or the same one when stale). With
 * `share`, records of the newest snapshot may be handed on to the next (delta-changes.ts).
 */
export function applyDelta(snapshot: Snapshot, message: SessionDeltaMessage, options?: ApplyOptions): ApplyOutcome {
  if (message.sessionId !== snapshot.sessionId) {
    throw new InvalidDeltaError(
      `delta for session ${quote(message.sessionId)} cannot apply to session ${quote(snapshot.sessionId)}`,
    );
  }
  // Rule 5, checked before anything else: a delta the snapshot already contains (e.g. one that
  // raced a snapshot-returning response) is ignored, whatever its kind.
  if (message.toRevision <= snapshot.revision) return { status: "stale", snapshot };

  const { delta } = message;
  switch (delta?.type) {
    case "snapshot.reset":
      return { status: "applied", snapshot: validateReset(snapshot, message, delta.snapshot) };
    case "snapshot.patch": {
      if (message.cause.type === "compaction" || message.cause.type === "rewind") {
        throw new InvalidDeltaError(`a ${message.cause.type} delta must be a snapshot.reset, not a patch`);
      }
      if (message.fromRevision !== snapshot.revision) throw new DeltaGapError(snapshot.revision, message.fromRevision);
      // toRevision > revision (not stale) = fromRevision, so the new revision is always greater.
      const next = applyChanges(snapshot, delta.changes, options);
      next.revision = message.toRevision;
      return { status: "applied", snapshot: next };
    }
    default:
      throw new InvalidDeltaError(
        `unknown delta type ${quote(String((delta as { type?: unknown } | undefined)?.type))}`,
      );
  }
}

/** Rule 2: a reset replaces everything, but only after its cause is shown to fit the installed snapshot. */
function validateReset(installed: Snapshot, message: SessionDeltaMessage, reset: Snapshot): Snapshot {
  if (reset.sessionId !== installed.sessionId) {
    throw new InvalidDeltaError(
      `reset snapshot is for session ${quote(reset.sessionId)}, not ${quote(installed.sessionId)}`,
    );
  }
  if (reset.revision !== message.toRevision) {
    throw new InvalidDeltaError(
      `reset snapshot has revision ${reset.revision}, but the delta's toRevision is ${message.toRevision}`,
    );
  }
  checkResetCause(installed, message.cause, reset);
  checkSnapshotInvariants(reset);
  return reset;
}

function checkResetCause(installed: Snapshot, cause: DeltaCause, reset: Snapshot): void {
  const installedEpoch = installed.timeline.epoch;
  if (cause.type === "compaction") {
    if (cause.previousEpoch !== installedEpoch) {
      throw new InvalidDeltaError(
        `compaction from epoch ${cause.previousEpoch}, but the installed timeline is in epoch ${installedEpoch}`,
      );
    }
    if (cause.epoch !== cause.previousEpoch + 1) {
      throw new InvalidDeltaError(
        `compaction epoch ${cause.epoch} must be previousEpoch + 1 (${cause.previousEpoch + 1})`,
      );
    }
    if (reset.timeline.epoch !== cause.epoch) {
      throw new InvalidDeltaError(
        `compaction to epoch ${cause.epoch}, but the reset timeline is in epoch ${reset.timeline.epoch}`,
      );
    }
  } else if (cause.type === "rewind") {
    if (cause.epoch !== installedEpoch) {
      throw new InvalidDeltaError(
        `rewind in epoch ${cause.epoch}, but the installed timeline is in epoch ${installedEpoch}`,
      );
    }
    if (reset.timeline.epoch !== cause.epoch) {
      throw new InvalidDeltaError(
        `rewind in epoch ${cause.epoch}, but the reset timeline is in epoch ${reset.timeline.epoch}`,
      );
    }
    if (cause.cutoffSequence > installed.timeline.sequence) {
      throw new InvalidDeltaError(
        `rewind cutoff ${cause.cutoffSequence} is past the installed high-water mark ${installed.timeline.sequence}`,
      );
    }
    // Rewind drops later items but never reuses their sequence numbers.
    if (reset.timeline.sequence !== installed.timeline.sequence) {
      throw new InvalidDeltaError(
        `rewind must keep the high-water mark ${installed.timeline.sequence}, but the reset timeline has ${reset.timeline.sequence}`,
      );
    }
    const late = reset.timeline.items.find((item) => item.sequence > cause.cutoffSequence);
    if (late) {
      throw new InvalidDeltaError(
        `rewind to sequence ${cause.cutoffSequence} kept timeline item ${quote(late.id)} with sequence ${late.sequence}`,
      );
    }
  }
  // resync and every other cause: the host says "this is the state now"; nothing to compare.
}

const quote = (s: string) => JSON.stringify(s);
