import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, expectContiguous, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";

/**
 * Sub-agents in the Ask event stream: subagent.started, subagent.activity (only what is new) and
 * subagent.completed, each once, replayable by cursor like every event; a client that subscribes
 * while a sub-agent runs finds it in the replay at once.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw?.stop());

describe("sub-agents as Ask events", () => {
  it("are told once each, in order, and replayed from a cursor", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { turnId } = await ask.request("session/send", { sessionId, content: "/subagent docs read the docs\n/subagent-fail broken it broke\nok" });
    await waitForTerminal(ask, sessionId, turnId);
    const events = ask.eventsOf(sessionId);
    const started = payloadsOf<any>(events, "subagent.started");
    expect(started.map((s) => s.title)).toEqual(["docs", "broken"]);
    expect(started[0]).toMatchObject({ runRevision: 1, model: "scripted-1", turnId, toolCallId: expect.any(String) });
    const docs = started[0].agentId;
    const activities = payloadsOf<any>(events, "subagent.activity").filter((a) => a.agentId === docs);
    expect(activities.map((a) => [a.index, a.activities.map((x: any) => x.type)])).toEqual([
      [0, ["tool"]],
      [1, ["assistant"]],
    ]);
    expect(activities[0].activities[0]).toEqual({ type: "tool", toolName: "read", outcome: "succeeded", action: "Read", subject: "read the docs" });
    const completed = payloadsOf<any>(events, "subagent.completed");
    expect(completed).toEqual([
      expect.objectContaining({ agentId: docs, status: "succeeded", response: "Done: read the docs", inputTokens: 4, outputTokens: 4 }),
      expect.objectContaining({ title: "broken", status: "failed", error: "it broke", outputTokens: 0 }),
    ]);
    // Each completes after it started, and the turn ends after both.
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf("subagent.completed")).toBeLessThan(types.indexOf("turn.completed"));

    const cursor = events.find((e) => e.type === "subagent.started")!.seq - 1;
    const later = await gw.client();
    await later.request("initialize", { client: { name: "later", version: "1" } });
    await later.request("session/subscribe", { sessionId, afterSeq: cursor });
    await later.waitFor(() => later.eventsOf(sessionId).some((e) => e.type === "turn.completed"), "the replay");
    expectContiguous(later.eventsOf(sessionId), cursor + 1);
    expect(later.eventsOf(sessionId).map((e) => e.payload)).toEqual(events.filter((e) => e.seq > cursor).map((e) => e.payload));
    expect(ask.invalid).toEqual([]);
    expect(later.invalid).toEqual([]);
  });

  it("a sub-agent running when a client subscribes is in its replay, and goes on live", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const { turnId } = await ask.request("session/send", { sessionId, content: "/subagent-slow 600000 watcher keep watching" });
    await ask.waitFor(() => payloadsOf<any>(ask.eventsOf(sessionId), "subagent.activity").length === 2, "the watcher at work");
    const agentId = payloadsOf<any>(ask.eventsOf(sessionId), "subagent.started")[0].agentId;

    const joiner = await gw.client();
    await joiner.request("initialize", { client: { name: "joiner", version: "1" } });
    await joiner.request("session/subscribe", { sessionId });
    await joiner.waitFor(() => payloadsOf(joiner.eventsOf(sessionId), "subagent.activity").length === 2, "the joiner's replay");
    expect(payloadsOf<any>(joiner.eventsOf(sessionId), "subagent.started")).toEqual([expect.objectContaining({ agentId, title: "watcher" })]);

    await gw.stack.core!.hosts.request("session.interruptSubagent", { sessionId, subagentId: agentId });
    await waitForTerminal(joiner, sessionId, turnId);
    expect(payloadsOf<any>(joiner.eventsOf(sessionId), "subagent.completed")).toEqual([expect.objectContaining({ agentId, status: "interrupted" })]);
    expect(joiner.invalid).toEqual([]);
  });

  it("a sub-agent cut off by a host restart ends interrupted for the clients, once, after the reconnect at the latest", async () => {
    const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "subagent-restart-")));
    const restarting = await startTestGateway({ stateDir });
    try {
      const ask = await restarting.client();
      const sessionId = await openSession(ask);
      const { turnId } = await ask.request("session/send", { sessionId, content: "/subagent-slow 600000 watcher keep watching" });
      await ask.waitFor(() => payloadsOf(ask.eventsOf(sessionId), "subagent.activity").length === 2, "the watcher at work");
      await restarting.stopHost();
      await eventually(() => !restarting.stack.upstream!.connected, "the bridge connection to drop");
      await restarting.startHost();
      await waitForTerminal(ask, sessionId, turnId);
      await ask.waitFor(() => payloadsOf(ask.eventsOf(sessionId), "subagent.completed").length > 0, "the watcher's end");
      expect(payloadsOf<any>(ask.eventsOf(sessionId), "subagent.completed")).toEqual([expect.objectContaining({ title: "watcher", status: "interrupted" })]);
      expect(payloadsOf(ask.eventsOf(sessionId), "subagent.started")).toHaveLength(1);
      expectContiguous(ask.eventsOf(sessionId));
      expect(ask.invalid).toEqual([]);
    } finally {
      await restarting.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
