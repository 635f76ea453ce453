import { describe, expect, it } from "vitest";
import type { Change, Snapshot, ToolRun } from "../../generated/tau-v18.js";
import { applyChanges, InvalidDeltaError } from "../../src/tau/delta-applier.js";
import { recordCopies } from "../../src/tau/shared-records.js";
import { running, sessionWith, settled } from "../support/turn-snapshots.js";

/**
 * The records that grow with a session (`turns`, `tools`) are updated in place when the caller
 * shares (the snapshot-mirror), so a turn update costs the same at 50 turns as at 1,000, while every
 * older snapshot keeps its value. Work is counted in record entries copied, not timed.
 */

/** One round's turn updates (running, then settled), each its own patch as Tau sends them. */
function round(snapshot: Snapshot, id: string): Snapshot[] {
  const started = applyChanges(snapshot, [{ type: "turn.set", turn: running(id) }], { share: true });
  const ended = applyChanges(started, [{ type: "lifecycle.set", lifecycle: "idle" }, { type: "turn.set", turn: settled(id) }], { share: true });
  return [started, ended];
}

/** Entries copied while `work` runs. */
function copiedDuring(work: () => void): number {
  const before = recordCopies.entries;
  work();
  return recordCopies.entries - before;
}

describe("shared turn records", () => {
  it("a turn update copies no turns, at 50 turns as at 1,000 (only the first patch copies once)", () => {
    const perUpdate = (turns: number) => {
      let snapshot = sessionWith(turns);
      // The snapshot came off the wire: the first patch takes its own copy, once.
      expect(copiedDuring(() => (snapshot = applyChanges(snapshot, [{ type: "cost.set", costTotal: 1 }, { type: "turn.set", turn: running("first") }], { share: true })))).toBe(turns);
      const updates = 40;
      const copied = copiedDuring(() => {
        for (let i = 0; i < updates / 2; i++) snapshot = round(snapshot, `new-${i}`)[1];
      });
      expect(Object.keys(snapshot.turns)).toHaveLength(turns + 1 + updates / 2);
      return copied / updates;
    };
    expect(perUpdate(50)).toBe(0);
    expect(perUpdate(1000)).toBe(0);
  });

  it("without sharing, every turn update copies the whole record (the cost the sharing removes)", () => {
    const snapshot = sessionWith(1000);
    expect(copiedDuring(() => applyChanges(snapshot, [{ type: "turn.set", turn: running("x") }]))).toBe(1000);
  });

  it("over many updates the copying stays within one entry per update, even with every old snapshot kept", () => {
    let snapshot = sessionWith(100);
    const kept: Snapshot[] = [];
    const updates = 2000;
    const copied = copiedDuring(() => {
      for (let i = 0; i < updates / 2; i++) {
        const [started, ended] = round(snapshot, `new-${i}`);
        kept.push(started, ended);
        snapshot = ended;
      }
    });
    // The first copy (100) and the checkpoints that cut the chain old snapshots hold (amortised, one entry per update).
    expect(copied).toBeLessThanOrEqual(100 + updates);
    expect(Object.keys(kept[0].turns)).toHaveLength(101);
  });

  it("every snapshot a turn update started from keeps its own turns and their order, through checkpoints, read in any order", () => {
    let snapshot = sessionWith(3);
    const versions: Array<{ snapshot: Snapshot; turns: Snapshot["turns"] }> = [];
    for (let i = 0; i < 120; i++) {
      for (const next of round(snapshot, `new-${i}`)) {
        versions.push({ snapshot: next, turns: structuredClone(next.turns) });
        snapshot = next;
      }
    }
    // Newest first, then oldest first, then the middle: each read builds (or finds) its own value.
    const order = [...versions.slice(-10).reverse(), ...versions.slice(0, 10), ...versions.slice(100, 120)];
    for (const { snapshot: version, turns } of order) {
      expect(version.turns).toEqual(turns);
      expect(Object.keys(version.turns)).toEqual(Object.keys(turns));
    }
    expect(JSON.parse(JSON.stringify(versions[5].snapshot)).turns).toEqual(versions[5].turns);
    expect(structuredClone(versions[6].snapshot).turns).toEqual(versions[6].turns);
  });

  it("a failing patch leaves the newest snapshot as it was, and it still writes in place afterwards", () => {
    let snapshot = applyChanges(sessionWith(10), [{ type: "turn.set", turn: running("a") }], { share: true });
    const before = structuredClone(snapshot.turns);
    const broken: Change[] = [
      { type: "turn.set", turn: running("b") },
      { type: "turn.set", turn: settled("a") },
      { type: "turn.set", turn: running("turn-0") }, // turn-0 is settled: refused
    ];
    expect(() => applyChanges(snapshot, broken, { share: true })).toThrow(InvalidDeltaError);
    expect(snapshot.turns).toEqual(before);
    expect(Object.keys(snapshot.turns)).toEqual(Object.keys(before));
    expect(copiedDuring(() => (snapshot = round(snapshot, "b")[1]))).toBe(0);
    expect(snapshot.turns.b).toEqual(settled("b"));
  });

  it("a patch of an older snapshot copies, and changes neither the newest nor the one it was applied to", () => {
    const old = applyChanges(sessionWith(5), [{ type: "turn.set", turn: running("a") }], { share: true });
    const [, newest] = round(old, "b");
    const newestTurns = structuredClone(newest.turns);
    const branch = applyChanges(old, [{ type: "turn.set", turn: settled("a") }], { share: true });
    expect(Object.keys(branch.turns)).toEqual([...Object.keys(sessionWith(5).turns), "a"]);
    expect(branch.turns.a).toEqual(settled("a"));
    expect(old.turns.a).toEqual(running("a"));
    expect(old.turns.b).toBeUndefined();
    expect(newest.turns).toEqual(newestTurns);
  });

  it("tools are shared the same way: a status update of a known tool copies none, and the older snapshot keeps its tools", () => {
    const tool = (id: string, status: "queued" | "running"): ToolRun =>
      ({ id, toolCallId: id, toolName: "bash", facetIds: [], status, call: { messageId: "m", contentIndex: 0 } }) as ToolRun;
    const fromWire = { ...sessionWith(1), tools: { t1: tool("t1", "queued"), t2: tool("t2", "queued"), t3: tool("t3", "queued") } };
    let first!: Snapshot;
    expect(copiedDuring(() => (first = applyChanges(fromWire, [{ type: "tool.set", tool: tool("t1", "running") }], { share: true })))).toBe(3);
    let second!: Snapshot;
    expect(copiedDuring(() => (second = applyChanges(first, [{ type: "tool.set", tool: tool("t2", "running") }], { share: true })))).toBe(0);
    expect(second.tools.t2.status).toBe("running");
    expect(first.tools.t2.status).toBe("queued");
    expect(Object.keys(first.tools)).toEqual(["t1", "t2", "t3"]);
    expect(fromWire.tools.t1.status).toBe("queued");
  });

  it("a snapshot superseded by a patch that wrote no turn shares the record with its successor (a sharing caller lets it go)", () => {
    const owner = applyChanges(sessionWith(2), [{ type: "turn.set", turn: running("a") }], { share: true });
    const streamed = applyChanges(owner, [{ type: "cost.set", costTotal: 1 }], { share: true });
    expect(streamed.turns).toBe(owner.turns);
    const settledAfter = applyChanges(streamed, [{ type: "turn.set", turn: settled("a") }], { share: true });
    // The input of the writing patch keeps its value; the one before it, which the caller dropped, does not.
    expect(streamed.turns.a).toEqual(running("a"));
    expect(settledAfter.turns.a).toEqual(settled("a"));
    expect(owner.turns.a).toEqual(settled("a"));
  });
});
