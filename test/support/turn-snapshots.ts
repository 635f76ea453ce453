import type { Snapshot, TurnRecord } from "../../generated/tau-v18.js";

/** Turn records and a session made of them only, for tests of what a turn update costs or changes. */

export const settled = (id: string): TurnRecord => ({ userHistoryEntryId: id, state: "settled", outcome: { status: "completed", stopReason: "stop" } });
export const running = (id: string): TurnRecord => ({ userHistoryEntryId: id, state: "running" });

/** A session that has had `turns` turns (turn records only: a turn update checks nothing else). */
export function sessionWith(turns: number, ids = (i: number) => `turn-${i}`): Snapshot {
  const records = Object.fromEntries(Array.from({ length: turns }, (_, i) => [ids(i), settled(ids(i))]));
  return {
    version: 18,
    sessionId: "s1",
    createdAt: 1000,
    revision: 1,
    agentState: { revision: 1, modelContextKey: "ctx-1" },
    lifecycle: "idle",
    costTotal: 0,
    messages: [],
    turns: records,
    timeline: { epoch: 1, sequence: 0, items: [] },
    tools: {},
    operations: {},
    agents: {},
    facets: {},
  } as unknown as Snapshot;
}
