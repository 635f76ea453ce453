import { describe, expect, it } from "vitest";
import type { Activity, SessionSubagentActivitiesMessage, Snapshot } from "../../generated/tau-v18.js";
import { SubagentEvents } from "../../src/bridge/translation/subagent-events.js";
import { fitBytes, oneLine } from "../../src/host/subagent-run.js";

/**
 * The bridge's sub-agent activity reading: Tau sends a run's whole list (its last 64) each time;
 * the events carry only what is new, positioned in the run, and a message no newer than the last
 * is ignored (spec §6.3).
 */

const said = (text: string): Activity => ({ type: "assistant", text });
const EMPTY = { agents: {}, tools: {}, messages: [], turns: {} } as unknown as Snapshot;

function message(revision: number, activities: Activity[], runRevision = 1): SessionSubagentActivitiesMessage {
  return { version: 18, type: "session.subagentActivities", sessionId: "s", revision, changes: [{ type: "agent.set", agentId: "a", state: { runRevision, activities } }] };
}

const news = (events: ReturnType<SubagentEvents["message"]>) =>
  events.map((e) => {
    const p = e.payload as { index: number; activities: Array<{ text: string }> };
    return [p.index, p.activities.map((a) => a.text)];
  });

describe("sub-agent activity lists → events", () => {
  it("reports only the activities beyond the last list, also when the oldest are dropped at 64", () => {
    const events = new SubagentEvents();
    events.absorb(EMPTY);
    const first = Array.from({ length: 64 }, (_, i) => said(`a${i}`));
    expect(news(events.message(message(2, first)))).toEqual([[0, first.map((a) => (a as { text: string }).text)]]);
    // Two more: Tau keeps the last 64, so the two oldest are gone.
    const next = [...first.slice(2), said("a64"), said("a65")];
    expect(news(events.message(message(3, next)))).toEqual([[64, ["a64", "a65"]]]);
    // Repeated texts are new activities too.
    expect(news(events.message(message(4, [...next.slice(1), said("a65")])))).toEqual([[66, ["a65"]]]);
  });

  it("ignores a message no newer than the last, and starts over for a new run", () => {
    const events = new SubagentEvents();
    events.absorb(EMPTY);
    events.message(message(5, [said("x")]));
    expect(events.message(message(5, [said("x"), said("y")]))).toEqual([]);
    expect(events.message(message(4, [said("x"), said("y")]))).toEqual([]);
    expect(news(events.message(message(6, [said("fresh")], 2)))).toEqual([[0, ["fresh"]]]);
  });

  it("takes a fresh observe's lists as the truth: a restarted host's lower revision included", () => {
    const events = new SubagentEvents();
    events.absorb(EMPTY, { revision: 9, agents: { a: { runRevision: 1, activities: [said("x")] } } });
    expect(news(events.state({ revision: 2, agents: { a: { runRevision: 1, activities: [said("x"), said("y")] } } }))).toEqual([[1, ["y"]]]);
    expect(news(events.message(message(3, [said("x"), said("y"), said("z")])))).toEqual([[2, ["z"]]]);
  });
});

describe("activity texts", () => {
  it("fit Tau's byte bounds, cut in the middle, on one line", () => {
    const long = "é".repeat(600);
    const cut = fitBytes(long, 512);
    expect(Buffer.byteLength(cut, "utf8")).toBeLessThanOrEqual(512);
    expect(cut).toContain("…");
    expect(cut.startsWith("éé")).toBe(true);
    expect(cut.endsWith("éé")).toBe(true);
    expect(fitBytes("short", 512)).toBe("short");
    expect(oneLine("a\r\nb\u2028c")).toBe("a b c");
    expect(oneLine("  \n ")).toBe("(empty)");
  });
});
