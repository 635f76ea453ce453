import { describe, expect, it } from "vitest";
import { assistantMessages, errorOf, hostWithSessionPerTest, resultOf, textOf, type TauTestClient, userTexts } from "../../support/tau-client.js";

/**
 * Turn methods of the embedded Tau host (spec §4.2) and the scripted agent's outputs, driven by raw
 * WebSocket clients. Turns that must stay running use `/sleep`; everything else streams with no
 * delay.
 */

let client: TauTestClient;
let sessionId: string;

hostWithSessionPerTest((fresh) => ({ client, sessionId } = fresh));

const pendingWith = (predicate: (messages: Array<{ id: string; mode: string; text: string }>) => boolean) => (m: any) =>
  m.type === "session.pendingUserMessages" && m.sessionId === sessionId && predicate(m.state.messages);

describe("session.submit", () => {
  it("runs a plain text turn: streamed reply in chunks, committed with usage and cost, turn ledger settled", async () => {
    const result = await client.call("session.submit", { sessionId, text: "hello world", historyEntryId: "turn-1" });
    expect(result).toEqual({ userHistoryEntryId: "turn-1", turn: { status: "completed", stopReason: "stop" } });

    const changes = client.changes(sessionId);
    const appends = changes.filter((c) => c.type === "message.content.append") as Array<{ text?: string; messageId: string }>;
    expect(appends.length).toBeGreaterThan(1);
    for (const a of appends) expect((a.text ?? "").length).toBeLessThanOrEqual(8);
    expect(appends.map((a) => a.text ?? "").join("")).toBe("You said: hello world");
    expect(changes.some((c) => c.type === "turn.set" && c.turn.userHistoryEntryId === "turn-1" && c.turn.state === "running")).toBe(true);
    expect(changes.some((c) => c.type === "lifecycle.set" && c.lifecycle === "running")).toBe(true);

    const snapshot = await client.snapshot(sessionId);
    expect(snapshot.lifecycle).toBe("idle");
    expect(snapshot.turns["turn-1"]).toEqual({ userHistoryEntryId: "turn-1", state: "settled", outcome: { status: "completed", stopReason: "stop" } });
    const [reply] = assistantMessages(snapshot);
    expect(reply).toMatchObject({ api: "scripted", provider: "tau-gateway", model: "scripted-1", stopReason: "stop" });
    expect(textOf(reply)).toBe("You said: hello world");
    // The committed message is the draft the appends streamed into.
    const committed = snapshot.messages.find((m) => m.message.role === "assistant")!;
    expect(appends.every((a) => a.messageId === committed.id)).toBe(true);
    expect(reply.usage.input).toBe(2);
    expect(reply.usage.output).toBe(4);
    expect(reply.usage.cost.total).toBeCloseTo(6e-6, 12);
    expect(snapshot.costTotal).toBeCloseTo(6e-6, 12);
    expect(userTexts(snapshot)).toEqual(["hello world"]);
    // Every model-visible message of the turn has a timeline item.
    const timelineMessageIds = snapshot.timeline.items.filter((i) => i.type === "message").map((i: any) => i.messageId);
    expect(timelineMessageIds).toContain(committed.id);
  });

  it("is busy while a turn is active", async () => {
    const first = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow" });
    await client.waitForTurnRunning(sessionId);
    const busy = await client.fail("session.submit", { sessionId, text: "too early" });
    expect(busy.code).toBe("busy");
    await client.call("session.interrupt", { sessionId });
    expect(resultOf(await first.response).turn).toEqual({ status: "aborted", stopReason: "aborted" });
    // Once idle, submit works again.
    expect((await client.call("session.submit", { sessionId, text: "now" })).turn.status).toBe("completed");
  });

  it("answers not_found for an unknown session and invalid_params for blank text", async () => {
    const missing = await client.fail("session.submit", { sessionId: "no-such-session", text: "hi" });
    expect(missing.code).toBe("not_found");
    expect(missing.data).toEqual({ sessionId: "no-such-session" });
    expect((await client.fail("session.submit", { sessionId, text: "   " })).code).toBe("invalid_params");
  });
});

describe("session.queue", () => {
  it("starts at once when the session is idle", async () => {
    const result = await client.call("session.queue", { sessionId, text: "solo" });
    expect(result.turn).toEqual({ status: "completed", stopReason: "stop" });
    expect(assistantMessages(await client.snapshot(sessionId)).map(textOf)).toEqual(["You said: solo"]);
  });

  it("waits as pending input while a turn runs, then runs when idle; each request is answered when its turn settles", async () => {
    const first = client.send("session.submit", { sessionId, text: "/sleep 1500\nfirst" });
    await client.waitForTurnRunning(sessionId);
    const queued = client.send("session.queue", { sessionId, text: "second" });
    const pending = await client.waitFor(pendingWith((ms) => ms.some((m) => m.text === "second")), "pending queued message");
    expect(pending.state.messages).toEqual([{ id: expect.any(String), mode: "queue", text: "second" }]);

    // A fresh observe reports the same pending state as its baseline.
    const observed = await client.call("session.observe", { sessionId });
    expect(observed.pendingUserMessages.messages).toEqual(pending.state.messages);
    expect(observed.pendingUserMessages.revision).toBeGreaterThanOrEqual(pending.state.revision);

    const firstResult = resultOf(await first.response);
    const queuedResult = resultOf(await queued.response);
    expect(firstResult.turn).toEqual({ status: "completed", stopReason: "stop" });
    expect(queuedResult.turn).toEqual({ status: "completed", stopReason: "stop" });
    expect(queuedResult.userHistoryEntryId).not.toBe(firstResult.userHistoryEntryId);
    expect(client.responseIndex(queued.id)).toBeGreaterThan(client.responseIndex(first.id));

    // The pending state empties with a newer revision once the queued message starts.
    await client.waitFor(
      (m) => m.type === "session.pendingUserMessages" && m.sessionId === sessionId && m.state.messages.length === 0 && m.state.revision > pending.state.revision,
      "pending state emptied",
    );
    const snapshot = await client.snapshot(sessionId);
    expect(userTexts(snapshot)).toEqual(["/sleep 1500\nfirst", "second"]);
    expect(snapshot.turns[queuedResult.userHistoryEntryId]).toMatchObject({ state: "settled", outcome: { status: "completed" } });
  });
});

describe("several queued messages", () => {
  it("run one after another in arrival order", async () => {
    const first = client.send("session.submit", { sessionId, text: "/sleep 500\nfirst" });
    await client.waitForTurnRunning(sessionId);
    const a = client.send("session.queue", { sessionId, text: "queued a" });
    const b = client.send("session.queue", { sessionId, text: "queued b" });
    const pending = await client.waitFor(pendingWith((ms) => ms.length === 2), "two queued messages");
    expect(pending.state.messages.map((m: any) => m.text)).toEqual(["queued a", "queued b"]);
    for (const r of [first, a, b]) expect(resultOf(await r.response).turn.status).toBe("completed");
    expect(client.responseIndex(a.id)).toBeLessThan(client.responseIndex(b.id));
    expect(userTexts(await client.snapshot(sessionId))).toEqual(["/sleep 500\nfirst", "queued a", "queued b"]);
    // Pending-state revisions only grow.
    const revisions = client.messagesOf("session.pendingUserMessages", sessionId).map((m) => m.state.revision);
    expect([...revisions].sort((x, y) => x - y)).toEqual(revisions);
    expect(new Set(revisions).size).toBe(revisions.length);
  });
});

describe("session.steer", () => {
  it("starts an ordinary turn when the session is idle", async () => {
    const result = await client.call("session.steer", { sessionId, text: "idle steer" });
    expect(result.turn).toEqual({ status: "completed", stopReason: "stop" });
    expect(assistantMessages(await client.snapshot(sessionId)).map(textOf)).toEqual(["You said: idle steer"]);
  });

  it("batches two steers sent during a running turn under one userHistoryEntryId", async () => {
    const submit = client.send("session.submit", { sessionId, text: "/sleep 1500\nbase" });
    await client.waitForTurnRunning(sessionId);
    const one = client.send("session.steer", { sessionId, text: "steer one" });
    const two = client.send("session.steer", { sessionId, text: "steer two" });
    const pending = await client.waitFor(pendingWith((ms) => ms.length === 2), "two pending steers");
    expect(pending.state.messages.map((m: any) => [m.mode, m.text])).toEqual([
      ["steer", "steer one"],
      ["steer", "steer two"],
    ]);

    const [r1, r2] = [resultOf(await one.response), resultOf(await two.response)];
    const submitted = resultOf(await submit.response);
    expect(r1.userHistoryEntryId).toBe(r2.userHistoryEntryId);
    expect(r1.userHistoryEntryId).not.toBe(submitted.userHistoryEntryId);
    expect(r1.turn.status).toBe("completed");
    expect(r2.turn).toEqual(r1.turn);

    const snapshot = await client.snapshot(sessionId);
    const texts = userTexts(snapshot).join("\n");
    expect(texts).toContain("steer one");
    expect(texts).toContain("steer two");
    expect(texts.indexOf("steer one")).toBeLessThan(texts.indexOf("steer two"));
    expect(snapshot.lifecycle).toBe("idle");
  });
});

describe("session.retry", () => {
  it("is invalid_request without a prior user turn", async () => {
    expect((await client.fail("session.retry", { sessionId })).code).toBe("invalid_request");
  });

  it("reruns a turn from the current history and is busy while a turn is active", async () => {
    await client.call("session.submit", { sessionId, text: "again" });
    const retried = await client.call("session.retry", { sessionId });
    expect(retried).toEqual({ turn: { status: "completed", stopReason: "stop" } });
    const snapshot = await client.snapshot(sessionId);
    expect(userTexts(snapshot)).toEqual(["again"]);
    expect(assistantMessages(snapshot).length).toBeGreaterThanOrEqual(2);

    const since = client.mark();
    const running = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow" });
    await client.waitForTurnRunning(sessionId, undefined, since);
    expect((await client.fail("session.retry", { sessionId })).code).toBe("busy");
    await client.call("session.interrupt", { sessionId });
    await running.response;
  });
});

describe("session.record", () => {
  it("appends user text without running a turn (historyEntryId trimmed)", async () => {
    const result = await client.call("session.record", { sessionId, text: "remember this", historyEntryId: "  rec-1  " });
    expect(result.userHistoryEntryId).toBe("rec-1");
    expect(userTexts(result.snapshot)).toEqual(["remember this"]);
    expect(assistantMessages(result.snapshot)).toEqual([]);
    expect(result.snapshot.lifecycle).toBe("idle");
    const snapshot = await client.snapshot(sessionId);
    expect(snapshot.revision).toBeGreaterThanOrEqual(result.snapshot.revision);
    expect(assistantMessages(snapshot)).toEqual([]);
  });

  it("interrupts the running turn and rejects pending input with invalid_request", async () => {
    const running = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow" });
    await client.waitForTurnRunning(sessionId);
    const queued = client.send("session.queue", { sessionId, text: "later" });
    await client.waitFor(pendingWith((ms) => ms.length === 1), "queued message pending");

    const recorded = await client.call("session.record", { sessionId, text: "note" });
    expect(resultOf(await running.response).turn).toEqual({ status: "aborted", stopReason: "aborted" });
    expect(errorOf(await queued.response).code).toBe("invalid_request");
    expect(userTexts(recorded.snapshot)).toEqual(["/sleep 5000\nslow", "note"]);
    expect(recorded.snapshot.lifecycle).toBe("idle");
  });
});

describe("session.interrupt", () => {
  it("reports nothing to interrupt when idle", async () => {
    expect(await client.call("session.interrupt", { sessionId })).toEqual({ interrupted: false, isTurnRunning: false });
  });

  it("ends the running turn as aborted", async () => {
    const running = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow", historyEntryId: "t-int" });
    await client.waitForTurnRunning(sessionId, "t-int");
    const result = await client.call("session.interrupt", { sessionId });
    expect(result.interrupted).toBe(true);
    expect(resultOf(await running.response)).toEqual({ userHistoryEntryId: "t-int", turn: { status: "aborted", stopReason: "aborted" } });
    const snapshot = await client.snapshot(sessionId);
    expect(snapshot.turns["t-int"]).toEqual({ userHistoryEntryId: "t-int", state: "settled", outcome: { status: "aborted", stopReason: "aborted" } });
    expect(snapshot.lifecycle).toBe("idle");
  });

  it("rejects a pending boundary steer with invalid_request", async () => {
    const running = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow" });
    await client.waitForTurnRunning(sessionId);
    const steer = client.send("session.steer", { sessionId, text: "too late" });
    await client.waitFor(pendingWith((ms) => ms.some((m) => m.mode === "steer")), "pending steer");
    await client.call("session.interrupt", { sessionId });
    expect(errorOf(await steer.response).code).toBe("invalid_request");
    expect(resultOf(await running.response).turn.status).toBe("aborted");
    await client.waitFor(pendingWith((ms) => ms.length === 0), "pending state emptied");
    expect(userTexts(await client.snapshot(sessionId)).join("\n")).not.toContain("too late");
  });
});

describe("session.cancelPendingMessages", () => {
  it("returns nothing when nothing is pending", async () => {
    expect(await client.call("session.cancelPendingMessages", { sessionId })).toEqual({ cancelled: [] });
  });

  it("cancels queued and steering input (steering first) and answers their requests with cancelled", async () => {
    const running = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow" });
    await client.waitForTurnRunning(sessionId);
    const queued = client.send("session.queue", { sessionId, text: "q1" });
    await client.waitFor(pendingWith((ms) => ms.length === 1), "queued message pending");
    const steered = client.send("session.steer", { sessionId, text: "s1" });
    await client.waitFor(pendingWith((ms) => ms.length === 2), "steer pending");

    const result = await client.call("session.cancelPendingMessages", { sessionId });
    expect(result.cancelled).toEqual([
      { id: expect.any(String), mode: "steer", text: "s1" },
      { id: expect.any(String), mode: "queue", text: "q1" },
    ]);
    expect(errorOf(await queued.response).code).toBe("cancelled");
    expect(errorOf(await steered.response).code).toBe("cancelled");
    await client.waitFor(pendingWith((ms) => ms.length === 0), "pending state emptied");

    // The running turn itself is untouched by the cancellation.
    expect(client.hasResponse(running.id)).toBe(false);
    await client.call("session.interrupt", { sessionId });
    expect(resultOf(await running.response).turn.status).toBe("aborted");
  });
});

describe("scripted agent outputs", () => {
  it("/think streams thinking before the reply", async () => {
    const result = await client.call("session.submit", { sessionId, text: "/think pondering deeply\nhi" });
    expect(result.turn).toEqual({ status: "completed", stopReason: "stop" });
    const appends = client.changes(sessionId).filter((c) => c.type === "message.content.append") as any[];
    expect(appends.map((a) => a.thinking ?? "").join("")).toBe("pondering deeply");
    const firstText = appends.findIndex((a) => a.text);
    const lastThinking = appends.map((a) => Boolean(a.thinking)).lastIndexOf(true);
    expect(lastThinking).toBeLessThan(firstText);
    const [reply] = assistantMessages(await client.snapshot(sessionId));
    expect(reply.content[0]).toMatchObject({ type: "thinking", thinking: "pondering deeply" });
    expect(textOf(reply)).toBe("You said: hi");
  });

  it("/bash runs a bash tool: queued → running → succeeded with a tool result, then the reply", async () => {
    const result = await client.call("session.submit", { sessionId, text: "/bash echo hi" });
    expect(result.turn).toEqual({ status: "completed", stopReason: "stop" });
    const statuses = client
      .changes(sessionId)
      .filter((c) => c.type === "tool.set" && c.tool.toolName === "bash")
      .map((c: any) => c.tool.status);
    expect(statuses).toEqual(expect.arrayContaining(["queued", "running", "succeeded"]));
    expect(statuses.indexOf("queued")).toBeLessThan(statuses.indexOf("running"));
    expect(statuses.indexOf("running")).toBeLessThan(statuses.indexOf("succeeded"));

    const snapshot = await client.snapshot(sessionId);
    const tools = Object.values(snapshot.tools) as any[];
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ toolName: "bash", status: "succeeded" });
    const call = snapshot.messages.find((m) => m.id === tools[0].call.messageId)!;
    expect((call.message as any).content[tools[0].call.contentIndex]).toMatchObject({ type: "toolCall", name: "bash", id: tools[0].toolCallId });
    expect(JSON.stringify((call.message as any).content[tools[0].call.contentIndex].arguments)).toContain("echo hi");
    const toolResult = snapshot.messages.find((m) => m.id === tools[0].resultMessageId)!.message as any;
    expect(toolResult).toMatchObject({ role: "toolResult", toolName: "bash", toolCallId: tools[0].toolCallId, isError: false });
    expect(textOf(toolResult)).toContain("hi");
    const last = snapshot.messages[snapshot.messages.length - 1].message as any;
    expect(last.role).toBe("assistant");
    expect(snapshot.timeline.items.filter((i) => i.type === "tool")).toHaveLength(1);
  });

  it("/bash with a failing command gives a failed tool run and an error tool result", async () => {
    await client.call("session.submit", { sessionId, text: "/bash echo oops >&2; exit 3" });
    const snapshot = await client.snapshot(sessionId);
    const [tool] = Object.values(snapshot.tools) as any[];
    expect(tool).toMatchObject({ toolName: "bash", status: "failed" });
    const toolResult = snapshot.messages.find((m) => m.id === tool.resultMessageId)!.message as any;
    expect(toolResult.isError).toBe(true);
    expect(textOf(toolResult)).toContain("oops");
  });

  it("/fail ends the turn failed with the message", async () => {
    const result = await client.call("session.submit", { sessionId, text: "/fail boom", historyEntryId: "t-fail" });
    expect(result.turn).toEqual({ status: "failed", stopReason: "error", errorMessage: "boom" });
    const snapshot = await client.snapshot(sessionId);
    expect(snapshot.turns["t-fail"]).toEqual({ userHistoryEntryId: "t-fail", state: "settled", outcome: { status: "failed", stopReason: "error", errorMessage: "boom" } });
    expect(snapshot.lifecycle).toBe("idle");
  });

  it("/length completes with stopReason length", async () => {
    const result = await client.call("session.submit", { sessionId, text: "/length" });
    expect(result.turn).toEqual({ status: "completed", stopReason: "length" });
  });

  it("/notice adds a session notice to the timeline with that severity", async () => {
    await client.call("session.submit", { sessionId, text: "/notice warn careful" });
    const snapshot = await client.snapshot(sessionId);
    const notices = snapshot.timeline.items.filter((i) => i.type === "notice") as any[];
    expect(notices).toHaveLength(1);
    expect(notices[0].notice).toMatchObject({ kind: "agent.notice", version: 1, severity: "warn", subject: { type: "session" } });
    expect(notices[0].notice.presentation.title).toContain("careful");
  });

  it("runs several directive lines in order within one turn", async () => {
    const result = await client.call("session.submit", { sessionId, text: "/notice info first\n/bash echo second\nthird" });
    expect(result.turn.status).toBe("completed");
    const snapshot = await client.snapshot(sessionId);
    const noticeItem = snapshot.timeline.items.find((i) => i.type === "notice")!;
    const toolItem = snapshot.timeline.items.find((i) => i.type === "tool")!;
    expect(noticeItem.sequence).toBeLessThan(toolItem.sequence);
    const replies = assistantMessages(snapshot).map(textOf).join("\n");
    expect(replies).toContain("third");
    // Timeline sequences strictly increase and never exceed the high-water mark.
    const sequences = snapshot.timeline.items.map((i) => i.sequence);
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(Math.max(...sequences)).toBeLessThanOrEqual(snapshot.timeline.sequence);
  });
});
