import { describe, expect, it } from "vitest";
import { SseParser } from "../../inspector/feed.js";
import { matchesFilter, parseFilter, type FilterableFrame } from "../../inspector/filter.js";
import { ciCommand, formatDuration, verdictText } from "../../inspector/render.js";
import { collapseFrames, streamedText, streamKey, type RowFrame } from "../../inspector/rows.js";

/** The inspector page's logic that needs no DOM: the filter, the collapsing of deltas, the feed's parser, the words shown. */

const frame = (over: Partial<FilterableFrame & RowFrame> = {}): FilterableFrame & RowFrame => ({
  seq: 1,
  connection: "codex-1",
  dialect: "codex",
  direction: "server",
  kind: "notification",
  verdict: { status: "valid" },
  ...over,
});

describe("the frames filter", () => {
  const pass = (text: string, f: FilterableFrame) => matchesFilter(parseFilter(text), f);

  it("matches the issue's example terms together", () => {
    const filter = "dialect:acp dir:out invalid session:S1 method:turn/*";
    expect(pass(filter, frame({ dialect: "acp", direction: "server", verdict: { status: "invalid" }, session: "S1", method: "turn/completed" }))).toBe(true);
    expect(pass(filter, frame({ dialect: "acp", direction: "client", verdict: { status: "invalid" }, session: "S1", method: "turn/completed" }))).toBe(false);
    expect(pass(filter, frame({ dialect: "codex", direction: "server", verdict: { status: "invalid" }, session: "S1", method: "turn/completed" }))).toBe(false);
    expect(pass(filter, frame({ dialect: "acp", direction: "server", verdict: { status: "valid" }, session: "S1", method: "turn/completed" }))).toBe(false);
    expect(pass(filter, frame({ dialect: "acp", direction: "server", verdict: { status: "invalid" }, session: "S2", method: "turn/completed" }))).toBe(false);
    expect(pass(filter, frame({ dialect: "acp", direction: "server", verdict: { status: "invalid" }, session: "S1", method: "thread/started" }))).toBe(false);
  });

  it("reads directions, statuses, negation, ids and bare words", () => {
    expect(pass("dir:in", frame({ direction: "client" }))).toBe(true);
    expect(pass("dir:client", frame({ direction: "server" }))).toBe(false);
    expect(pass("invalid", frame({ verdict: { status: "unpaired" } }))).toBe(true);
    expect(pass("status:unpaired", frame({ verdict: { status: "invalid" } }))).toBe(false);
    expect(pass("-method:*/delta", frame({ method: "item/agentMessage/delta" }))).toBe(false);
    expect(pass("-method:*/delta", frame({ method: "turn/started" }))).toBe(true);
    expect(pass("id:7", frame({ id: 7 }))).toBe(true);
    expect(pass("id:7", frame({ id: "7x" }))).toBe(false);
    expect(pass("Hello", frame({ message: '{"text":"hello there"}' }))).toBe(true);
    expect(pass("method:turn.*", frame({ method: "turnX" }))).toBe(false);
    expect(pass("", frame())).toBe(true);
  });

  it("reports the words it cannot read instead of ignoring them", () => {
    expect(parseFilter("dialect:mcp dir:up status:bad method:").errors).toEqual([
      "dialect:mcp: dialect is ask, codex, acp or tau",
      "dir:up: dir is in, out, client or server",
      expect.stringMatching(/^status:bad: status is one of valid, invalid, /),
      "method:: needs a value",
    ]);
  });
});

describe("collapsing streamed deltas", () => {
  const codexDelta = (seq: number, itemId: string, delta: string, connection = "codex-1") =>
    frame({ seq, connection, method: "item/agentMessage/delta", message: JSON.stringify({ method: "item/agentMessage/delta", params: { threadId: "t", turnId: "u", itemId, delta } }) });

  it("folds the deltas of one item into one row and keeps other frames apart", () => {
    const other = frame({ seq: 3, connection: "codex-1", method: "item/completed", message: '{"method":"item/completed","params":{}}' });
    const rows = collapseFrames([codexDelta(1, "i1", "Hel"), codexDelta(2, "i1", "lo"), other, codexDelta(4, "i1", "!"), codexDelta(5, "i2", "x")]);
    expect(rows.map((r) => (r.type === "frame" ? r.frame.seq : r.frames.map((f) => f.seq)))).toEqual([[1, 2], 3, [4], [5]]);
    expect(streamedText(rows[0] as { frames: RowFrame[] })).toBe("Hello");
  });

  it("lets another connection's frames interleave without splitting a stream, and shows the worst verdict", () => {
    const ask = frame({ seq: 2, connection: "ask-1", dialect: "ask", method: "session/event", message: '{"method":"session/event","params":{"event":{"type":"turn.started","seq":1,"payload":{}}}}' });
    const bad = { ...codexDelta(3, "i1", "lo"), verdict: { status: "invalid" } };
    const rows = collapseFrames([codexDelta(1, "i1", "Hel"), ask, bad]);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ type: "stream", status: "invalid" });
  });

  it("knows the deltas of ACP and Ask, and never a request", () => {
    const acp = frame({ dialect: "acp", message: JSON.stringify({ method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } } } }) });
    const ask = frame({ dialect: "ask", message: JSON.stringify({ method: "session/event", params: { sessionId: "s", event: { type: "model.streaming", seq: 3, payload: { delta: "hi" } } } }) });
    const request = frame({ message: JSON.stringify({ id: 1, method: "item/agentMessage/delta", params: {} }) });
    expect(streamKey(acp)).toContain("agent_message_chunk");
    expect(streamKey(ask)).toContain("model.streaming");
    expect(streamKey(request)).toBeUndefined();
    expect(streamedText({ frames: [acp, ask] })).toBe("hihi");
  });
});

describe("the feed's event-stream parser", () => {
  it("joins events split anywhere across chunks, skips comments and keeps the last id", () => {
    const parser = new SseParser();
    expect(parser.push(": keepalive\n\nid: 4\nevent: fra")).toEqual([]);
    expect(parser.push('me\ndata: {"a":\ndata: 1}\r\n\r\nid: 5\ndata: x\n')).toEqual([{ id: "4", event: "frame", data: '{"a":\n1}' }]);
    expect(parser.push("\n")).toEqual([{ id: "5", event: "message", data: "x" }]);
  });
});

describe("words on the page", () => {
  it("formats durations, verdicts and the CI command", () => {
    expect([formatDuration(12.4), formatDuration(1460), formatDuration(185_000)]).toEqual(["12 ms", "1.5 s", "3 min"]);
    expect(verdictText({ status: "invalid", issues: [{ pointer: "/params/input", message: "must be array" }] })).toBe("invalid — /params/input: must be array");
    expect(verdictText({ status: "valid", issues: [] })).toBe("valid");
    expect(ciCommand("acp-3")).toBe("npx tau-gateway validate --format github acp-3.jsonl");
  });
});
