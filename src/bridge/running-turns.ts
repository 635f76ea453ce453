import type { SessionDeltaMessage, Snapshot } from "../../generated/tau-v18.js";

/**
 * The turns Tau reports running in the installed snapshot, in the order of its turns record (as
 * `Object.values` lists them), kept up from each applied patch's `turn.set`s instead of found by
 * walking the record, which keeps every turn the session ever had: `session/send` asks twice per
 * message, and the walk cost O(turns) each time.
 */
export class RunningTurns {
  /** The snapshot `ids` are of; another one is walked once, then followed. */
  private of: Snapshot | undefined;
  private ids: readonly string[] = [];

  /** The running turns of `snapshot` (a new array each time). */
  in(snapshot: Snapshot | undefined): string[] {
    if (!snapshot) return [];
    if (snapshot !== this.of) {
      this.ids = Object.values(snapshot.turns)
        .filter((t) => t.state === "running")
        .map((t) => t.userHistoryEntryId);
      this.of = snapshot;
    }
    return [...this.ids];
  }

  /** `message` took the installed snapshot from `before` to `after`. */
  applied(message: SessionDeltaMessage, before: Snapshot, after: Snapshot): void {
    if (this.of !== before || message.delta.type !== "snapshot.patch") return; // walked when next asked
    let ids = this.ids;
    for (const change of message.delta.changes) {
      if (change.type !== "turn.set") continue;
      const id = change.turn.userHistoryEntryId;
      const at = ids.indexOf(id);
      if (change.turn.state === "settled") {
        if (at >= 0) ids = ids.filter((other) => other !== id);
      } else if (at < 0) {
        // A turn is running from its first record on (a settled one never runs again), so it is new
        // and comes last, unless its id is an array index, which objects list first: walk then.
        if (ARRAY_INDEX.test(id)) return void (this.of = undefined);
        ids = [...ids, id];
      }
    }
    this.ids = ids;
    this.of = after;
  }
}

/** Keys that objects list before all others, in numeric order (canonical integers below 2³² − 1). */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;
