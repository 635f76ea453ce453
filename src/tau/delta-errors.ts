/**
 * The two ways a `session.delta` can fail to apply (spec §6.2 rule 6). Both mean the same thing to
 * a client — stop applying and fetch a fresh `session.snapshot` — but a gap is routine (a missed
 * message) while an invalid delta points at a broken upstream, so callers log them differently.
 */

/** A patch whose `fromRevision` is not the installed revision: deltas were missed. */
export class DeltaGapError extends Error {
  readonly expected: number;
  readonly received: number | null;

  constructor(expected: number, received: number | null) {
    super(
      `delta gap: patch starts from revision ${received === null ? "null" : received}, installed revision is ${expected}`,
    );
    this.name = "DeltaGapError";
    this.expected = expected;
    this.received = received;
  }
}

/**
 * A delta that cannot be applied: wrong session, a reset whose cause does not fit the installed
 * snapshot, an invalid change, or a result that breaks the snapshot's references or order.
 * `changeIndex` names the offending entry of a patch's `changes` when one change is to blame.
 */
export class InvalidDeltaError extends Error {
  readonly reason: string;
  readonly changeIndex?: number;

  constructor(reason: string, changeIndex?: number, changeType?: string) {
    const where = changeIndex === undefined ? "" : ` (change #${changeIndex}${changeType ? ` ${changeType}` : ""})`;
    super(`invalid delta${where}: ${reason}`);
    this.name = "InvalidDeltaError";
    this.reason = reason;
    if (changeIndex !== undefined) this.changeIndex = changeIndex;
  }
}
