import { describe, expect, it } from "vitest";
import type { Change, SessionDeltaMessage, Snapshot } from "../../generated/tau-v18.js";
import { RunningTurns } from "../../src/bridge/running-turns.js";
import { applyChanges } from "../../src/tau/delta-applier.js";
import { running, sessionWith, settled } from "../support/turn-snapshots.js";

/** The running turns followed patch by patch are what walking each snapshot's turns record finds. */

const walked = (snapshot: Snapshot) => Object.values(snapshot.turns).filter((t) => t.state === "running").map((t) => t.userHistoryEntryId);

function follow(start: Snapshot, patches: Change[][]): void {
  const turns = new RunningTurns();
  expect(turns.in(start)).toEqual(walked(start));
  let snapshot = start;
  for (const changes of patches) {
    const next = applyChanges(snapshot, changes, { share: true });
    const message = { type: "session.delta", delta: { type: "snapshot.patch", changes } } as SessionDeltaMessage;
    turns.applied(message, snapshot, next);
    snapshot = next;
    expect(turns.in(snapshot)).toEqual(walked(snapshot));
  }
}

describe("running turns", () => {
  it("follows turns starting and settling, several at once, in the record's order", () => {
    follow(sessionWith(3), [
      [{ type: "turn.set", turn: running("a") }],
      [{ type: "cost.set", costTotal: 1 }],
      [{ type: "turn.set", turn: running("b") }, { type: "turn.set", turn: running("a") }],
      [{ type: "turn.set", turn: settled("a") }],
      [{ type: "turn.set", turn: running("c") }],
      [{ type: "turn.set", turn: settled("c") }, { type: "turn.set", turn: settled("b") }],
    ]);
  });

  it("a turn whose id is an array index is listed first, as the record lists it", () => {
    follow(sessionWith(2, (i) => String(10 + i)), [
      [{ type: "turn.set", turn: running("x") }],
      [{ type: "turn.set", turn: running("7") }],
      [{ type: "turn.set", turn: running("y") }],
      [{ type: "turn.set", turn: settled("7") }],
    ]);
  });

  it("walks a snapshot it did not follow to", () => {
    const turns = new RunningTurns();
    const first = applyChanges(sessionWith(1), [{ type: "turn.set", turn: running("a") }]);
    expect(turns.in(first)).toEqual(["a"]);
    const elsewhere = applyChanges(sessionWith(1), [{ type: "turn.set", turn: running("b") }]);
    expect(turns.in(elsewhere)).toEqual(["b"]);
    expect(turns.in(undefined)).toEqual([]);
  });
});
