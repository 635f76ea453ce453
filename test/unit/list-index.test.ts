import { describe, expect, it } from "vitest";
import type { Change, MessageRecord, Snapshot } from "../../generated/tau-v18.js";
import { applyChanges, InvalidDeltaError } from "../../src/tau/delta-applier.js";
import { listIndexBuilds } from "../../src/tau/list-index.js";
import { running, sessionWith, settled } from "../support/turn-snapshots.js";

/**
 * With `share` (the snapshot-mirror), message and timeline lookups go through an index that moves
 * from list to list with the patches instead of walking the lists: the same results as without it,
 * the same refusals, on the newest snapshot as on an older one, after a failed patch and after a
 * removal; and each list is walked once, not once per patch.
 */

const user = (id: string): MessageRecord => ({ id, state: "committed", modelVisible: true, message: { role: "user", content: "hello", timestamp: 1 } }) as MessageRecord;
const draft = (id: string): MessageRecord =>
  ({ id, state: "draft", modelVisible: false, message: { role: "assistant", content: [], timestamp: 2 } }) as unknown as MessageRecord;
const item = (id: string, messageId: string, sequence: number) => ({ type: "message" as const, id, messageId, sequence, createdAt: 1 });

/** One round's patches as Tau sends them (a user message, a streamed reply, the turn settling). */
function roundPatches(i: number, firstSequence: number): Change[][] {
  const u = `u-${i}`;
  const m = `m-${i}`;
  return [
    [{ type: "lifecycle.set", lifecycle: "running" }, { type: "message.append", message: user(u) }, { type: "timeline.append", item: item(`item-${firstSequence}`, u, firstSequence) }, { type: "turn.set", turn: running(u) }],
    [{ type: "message.append", message: draft(m) }, { type: "timeline.append", item: item(`item-${firstSequence + 1}`, m, firstSequence + 1) }],
    [{ type: "message.content.append", messageId: m, text: "You said", timestamp: 3 }],
    [{ type: "message.content.append", messageId: m, text: ": hello", timestamp: 4 }],
    [{ type: "message.replace", message: { ...draft(m), state: "committed", modelVisible: true } as MessageRecord }],
    [{ type: "turn.set", turn: settled(u) }, { type: "lifecycle.set", lifecycle: "idle" }],
  ] as Change[][];
}

function conversation(rounds: number, share: boolean, from = sessionWith(0), first = 0): Snapshot {
  let snapshot = from;
  for (let i = first; i < first + rounds; i++) for (const changes of roundPatches(i, 2 * i + 1)) snapshot = applyChanges(snapshot, changes, { share });
  return snapshot;
}

const refusal = (work: () => unknown) => {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidDeltaError);
    return (error as Error).message;
  }
  throw new Error("the patch was applied");
};

describe("indexed message and timeline lookups (share)", () => {
  it("give the snapshots the walks give, and walk each list once over a conversation", () => {
    const before = listIndexBuilds.entries;
    const shared = conversation(150, true);
    // One build per list, of the session as it came (empty here), then the index moves along.
    expect(listIndexBuilds.entries - before).toBe(0);
    expect(shared).toEqual(conversation(150, false));
    expect(shared.messages).toHaveLength(300);
    expect(shared.timeline.items).toHaveLength(300);
  });

  it("refuse a message or timeline item id the session already has, leaving the snapshot as it was", () => {
    const snapshot = conversation(50, true);
    const copy = structuredClone(snapshot);
    expect(refusal(() => applyChanges(snapshot, [{ type: "message.append", message: user("u-3") }], { share: true }))).toMatch(/already exists/);
    expect(refusal(() => applyChanges(snapshot, [{ type: "timeline.append", item: item("item-7", "u-3", 101) }], { share: true }))).toMatch(/already exists/);
    expect(refusal(() => applyChanges(snapshot, [{ type: "message.content.append", messageId: "nope", text: "x", timestamp: 5 }], { share: true }))).toMatch(/no message/);
    expect(snapshot).toEqual(copy);
    // The same snapshot still takes a good patch, which finds the messages where they are.
    const next = applyChanges(snapshot, [{ type: "message.replace", message: { ...user("u-3"), modelVisible: false } }], { share: true });
    expect(next.messages[6]).toMatchObject({ id: "u-3", modelVisible: false });
    expect(next.messages).toHaveLength(100);
  });

  it("take back what a failed patch appended", () => {
    const snapshot = conversation(10, true);
    // Appends u-new and its item, then fails on a duplicate item id.
    const failing = [
      { type: "message.append", message: user("u-new") },
      { type: "timeline.append", item: item("item-21", "u-new", 21) },
      { type: "timeline.append", item: item("item-21", "u-new", 22) },
    ] as Change[];
    expect(refusal(() => applyChanges(snapshot, failing, { share: true }))).toMatch(/item-21.*already exists/);
    const next = applyChanges(snapshot, failing.slice(0, 2), { share: true });
    expect(next.messages.at(-1)!.id).toBe("u-new");
    expect(refusal(() => applyChanges(next, [{ type: "message.append", message: user("u-new") }], { share: true }))).toMatch(/already exists/);
  });

  it("find the messages of an older snapshot, whose index moved on to a newer one", () => {
    const old = conversation(5, true);
    const newer = conversation(2, true, old, 5);
    // u-5 is in the newer snapshot only: the old one takes it; u-1 it has already.
    const branch = applyChanges(old, [{ type: "message.append", message: user("u-5") }], { share: true });
    expect(branch.messages.map((m) => m.id).slice(-2)).toEqual(["m-4", "u-5"]);
    expect(refusal(() => applyChanges(old, [{ type: "message.append", message: user("u-1") }], { share: true }))).toMatch(/already exists/);
    expect(refusal(() => applyChanges(newer, [{ type: "message.append", message: user("u-5") }], { share: true }))).toMatch(/already exists/);
  });

  it("after a removal, walk for the rest of the patch and index again from the next one", () => {
    const snapshot = conversation(4, true);
    const removed = applyChanges(snapshot, [{ type: "timeline.remove", id: "item-3" }, { type: "timeline.append", item: item("item-3", "u-1", 9) }], { share: true });
    expect(removed.timeline.items.map((i) => i.id)).toEqual(["item-1", "item-2", "item-4", "item-5", "item-6", "item-7", "item-8", "item-3"]);
    const before = listIndexBuilds.entries;
    expect(refusal(() => applyChanges(removed, [{ type: "timeline.append", item: item("item-4", "u-1", 10) }], { share: true }))).toMatch(/item-4.*already exists/);
    expect(listIndexBuilds.entries - before).toBe(8);
    const next = applyChanges(removed, [{ type: "timeline.append", item: item("item-10", "u-1", 10) }], { share: true });
    expect(next.timeline.items.at(-1)!.id).toBe("item-10");
  });
});
