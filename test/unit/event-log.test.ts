import { describe, expect, it } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { EventLog, EventRetentionError } from "../../src/bridge/event-log.js";

const streaming = (log: EventLog, n: number) => {
  for (let i = 0; i < n; i += 1) log.append("model.streaming", { delta: `chunk ${i + 1}` });
};
const seqs = (events: Event[]) => events.map((e) => e.seq);

describe("EventLog", () => {
  it("numbers events from 1 in append order", () => {
    const log = new EventLog();
    expect(log.newestSeq).toBe(0);
    expect(log.oldestSeq).toBe(1);
    const created = log.append("session.created", { sessionId: "s-1" });
    expect(created).toEqual({ type: "session.created", seq: 1, payload: { sessionId: "s-1" } });
    expect(log.append("turn.started", { turnId: "t-1" }).seq).toBe(2);
    expect(log.append("model.streaming", { delta: "hi" }).seq).toBe(3);
    expect(log.newestSeq).toBe(3);
    expect(log.oldestSeq).toBe(1);
    expect(log.read(0).events.map((e) => [e.seq, e.type])).toEqual([
      [1, "session.created"],
      [2, "turn.started"],
      [3, "model.streaming"],
    ]);
  });

  it("reads after a seq with a limit; hasMore is true only while more events exist", () => {
    const log = new EventLog();
    streaming(log, 5);
    expect(seqs(log.read(0, 2).events)).toEqual([1, 2]);
    expect(log.read(0, 2).hasMore).toBe(true);
    expect(seqs(log.read(2, 2).events)).toEqual([3, 4]);
    expect(log.read(2, 2).hasMore).toBe(true);
    // Exactly `limit` events remain: nothing more to fetch.
    expect(seqs(log.read(3, 2).events)).toEqual([4, 5]);
    expect(log.read(3, 2).hasMore).toBe(false);
    expect(log.read(4, 10)).toMatchObject({ hasMore: false });
    expect(seqs(log.read(4, 10).events)).toEqual([5]);
    expect(log.read(0)).toMatchObject({ hasMore: false });
    expect(seqs(log.read(0).events)).toEqual([1, 2, 3, 4, 5]);
    expect(log.read(5)).toEqual({ events: [], hasMore: false });
    expect(log.read(99)).toEqual({ events: [], hasMore: false });
    expect(log.read(0, 0)).toEqual({ events: [], hasMore: true });
  });

  it("an empty log reads as empty", () => {
    expect(new EventLog().read(0, 10)).toEqual({ events: [], hasMore: false });
  });

  it("keeps only the newest `retention` events and refuses reads that would skip dropped ones", () => {
    const log = new EventLog({ retention: 3 });
    streaming(log, 7);
    expect(log.newestSeq).toBe(7);
    expect(log.oldestSeq).toBe(5);
    expect(seqs(log.read(4).events)).toEqual([5, 6, 7]);
    expect(seqs(log.read(5, 1).events)).toEqual([6]);
    let error: unknown;
    try {
      log.read(3);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EventRetentionError);
    expect((error as EventRetentionError).oldestSeq).toBe(5);
    expect((error as Error).message).toBe("events after seq 3 are no longer retained; the oldest retained seq is 5");
    expect(() => log.read(0, 1)).toThrow(/the oldest retained seq is 5/);
  });

  it("stays correct across many drops (the dropped prefix is reclaimed)", () => {
    const log = new EventLog({ retention: 4 });
    streaming(log, 1000);
    expect(log.oldestSeq).toBe(997);
    expect(log.read(996).events.map((e) => (e.payload as { delta: string }).delta)).toEqual(["chunk 997", "chunk 998", "chunk 999", "chunk 1000"]);
    expect(() => log.read(995)).toThrow(EventRetentionError);
  });

  it("rejects a retention that is not a positive integer", () => {
    expect(() => new EventLog({ retention: 0 })).toThrow(RangeError);
    expect(() => new EventLog({ retention: 1.5 })).toThrow(RangeError);
  });

  it("calls subscribers synchronously, in seq order, until they unsubscribe", () => {
    const log = new EventLog();
    const seen: string[] = [];
    const stopA = log.subscribe((e) => seen.push(`a${e.seq}`));
    log.subscribe((e) => seen.push(`b${e.seq}`));
    log.append("session.created", { sessionId: "s" });
    expect(seen).toEqual(["a1", "b1"]);
    stopA();
    log.append("turn.started", { turnId: "t" });
    expect(seen).toEqual(["a1", "b1", "b2"]);
  });

  it("keeps seq order for every subscriber when a subscriber appends while being notified", () => {
    const log = new EventLog();
    const first: number[] = [];
    const second: number[] = [];
    log.subscribe((e) => {
      first.push(e.seq);
      if (e.type === "turn.started") log.append("turn.completed", { turnId: "t", response: "" });
    });
    log.subscribe((e) => second.push(e.seq));
    log.append("turn.started", { turnId: "t" });
    expect(first).toEqual([1, 2]);
    expect(second).toEqual([1, 2]);
  });

  it("onListenerError receives a subscriber's error; append itself succeeds", () => {
    const reported: Array<[string, number]> = [];
    const log = new EventLog({ onListenerError: (error, event) => reported.push([(error as Error).message, event.seq]) });
    log.subscribe(() => {
      throw new Error("subscriber broke");
    });
    expect(log.append("session.created", { sessionId: "s" }).seq).toBe(1);
    expect(reported).toEqual([["subscriber broke", 1]]);
  });

  it("a throwing subscriber does not stop delivery to the others, and its error surfaces", () => {
    const log = new EventLog();
    const seen: number[] = [];
    log.subscribe(() => {
      throw new Error("subscriber broke");
    });
    log.subscribe((e) => seen.push(e.seq));
    expect(() => log.append("session.created", { sessionId: "s" })).toThrow("subscriber broke");
    expect(seen).toEqual([1]);
    expect(log.newestSeq).toBe(1);
  });

  it("as a copy of a shared log: takes events with their own seqs, may begin anywhere, drops repeats and refuses gaps", () => {
    const log = new EventLog({ retention: 3 });
    const heard: number[] = [];
    log.subscribe((event) => heard.push(event.seq));
    const at = (seq: number): Event => ({ type: "model.streaming", seq, payload: { delta: `chunk ${seq}` } });
    expect(log.insert(at(41))).toBe(true);
    expect(log.oldestSeq).toBe(41);
    expect(log.insert(at(42))).toBe(true);
    expect(log.insert(at(42))).toBe(false);
    expect(log.insert(at(40))).toBe(false);
    expect(() => log.insert(at(44))).toThrow(RangeError);
    expect(log.insert(at(43))).toBe(true);
    expect(log.insert(at(44))).toBe(true);
    expect(heard).toEqual([41, 42, 43, 44]);
    expect(seqs(log.read(41).events)).toEqual([42, 43, 44]);
    expect(() => log.read(40)).toThrow(EventRetentionError);
  });

  it("restarts when the shared log began a new epoch: history dropped, numbering from 1, restart listeners told first", () => {
    const log = new EventLog();
    streaming(log, 3);
    const told: string[] = [];
    log.onRestart(() => told.push(`restart at ${log.newestSeq}`));
    log.subscribe((event) => told.push(`${event.seq}:${event.type}`));
    log.restart();
    expect(log.newestSeq).toBe(0);
    expect(log.read(0).events).toEqual([]);
    log.insert({ type: "session.reset", seq: 1, payload: { cause: "resync" } });
    expect(told).toEqual(["restart at 0", "1:session.reset"]);
  });
});
