import { describe, expect, it } from "vitest";
import { CloseCoordination, DEFAULT_MAX_CLOSED_SESSIONS } from "../../src/bridge/close-coordination.js";

/** One registry's closes without a shared store: no record open, nothing shared with other replicas. */
const closes = (maxClosedSessions?: number) =>
  new CloseCoordination({ settings: undefined, maxClosedSessions, sessions: { get: () => undefined, forget: () => undefined } });

/** The gateway's memory of closed sessions: refused from the start of a close, bounded once closed. */
describe("CloseCoordination: closed sessions", () => {
  it("refuses a session from the moment its close begins; a second close of it is refused; an abandoned close reopens it", () => {
    const closed = closes();
    expect(closed.begin("s1")).toBe(true);
    expect(closed.has("s1")).toBe(true);
    expect(closed.begin("s1")).toBe(false);
    void closed.abandon("s1");
    expect(closed.has("s1")).toBe(false);
    expect(closed.begin("s1")).toBe(true);
    closed.finish("s1");
    expect(closed.has("s1")).toBe(true);
    expect(closed.begin("s1")).toBe(false);
  });

  it("remembers at most the bound of finished closes, forgetting the oldest; closes in progress are never forgotten", () => {
    const closed = closes(3);
    closed.begin("in-progress");
    for (const id of ["a", "b", "c", "d", "e"]) {
      closed.begin(id);
      closed.finish(id);
    }
    expect(closed.remembered).toBe(3);
    expect(["a", "b", "c", "d", "e"].map((id) => closed.has(id))).toEqual([false, false, true, true, true]);
    expect(closed.has("in-progress")).toBe(true);
    // A forgotten one can be closed again (it reads as an ordinary session by then).
    expect(closed.begin("a")).toBe(true);
  });

  it("defaults to the bound of the other per-session caches", () => {
    expect(DEFAULT_MAX_CLOSED_SESSIONS).toBe(100_000);
    expect(() => closes(0)).toThrow(RangeError);
  });
});
