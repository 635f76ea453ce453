import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { codexOnSession, editorOnSession } from "../../support/session-joiners.js";

/**
 * A turn that starts two sub-agents, on one session with a Codex, an ACP and an Ask client on it:
 * one sub-agent succeeds, the other is interrupted by the Codex client through its child thread
 * (turn/interrupt), and each client sees both live and again on resume, in its own words — child
 * threads with collabAgentToolCall and subAgentActivity items for Codex, tool call cards for the
 * editor, subagent.* events for Ask — every message valid against its dialect's official schema
 * (Codex's 0.169.0 bundle, ACP's SDK schema; Ask's registry).
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw?.stop());

const PROMPT = "/subagent quick fast task\n/subagent-slow 600000 slow long task\nboth";

describe("sub-agents on one session with three clients", () => {
  it("are seen live and on resume by a Codex, an ACP and an Ask client; the Codex client interrupts one", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const codex = await codexOnSession(gw, sessionId);
    const acp = await editorOnSession(gw, sessionId);

    const { turnId } = await ask.request("session/send", { sessionId, content: PROMPT });
    const started = () => payloadsOf<any>(ask.eventsOf(sessionId), "subagent.started");
    await ask.waitFor(() => payloadsOf<any>(ask.eventsOf(sessionId), "subagent.activity").some((a) => a.activities.some((x: any) => x.text === "Working on slow…")), "the slow sub-agent at work");
    await ask.waitFor(() => payloadsOf<any>(ask.eventsOf(sessionId), "subagent.completed").length === 1, "the quick sub-agent's end");
    const quick = started().find((s) => s.title === "quick").agentId;
    const slow = started().find((s) => s.title === "slow").agentId;

    // Codex: the children are threads of their own, listed for the sub-agent source kinds only.
    const children = await codex.request("thread/list", { sourceKinds: ["subAgentThreadSpawn"] });
    expect(children.data.map((t: any) => t.id).sort()).toEqual([quick, slow].sort());
    for (const child of children.data) {
      expect(child).toMatchObject({ sessionId, parentThreadId: sessionId, source: { subAgent: { thread_spawn: { parent_thread_id: sessionId, depth: 1 } } } });
    }
    expect((await codex.request("thread/list", {})).data.map((t: any) => t.id)).toEqual([sessionId]);
    const read = await codex.request("thread/read", { threadId: slow, includeTurns: true });
    expect(read.thread).toMatchObject({ id: slow, agentNickname: "slow", status: { type: "active" } });
    const [run] = read.thread.turns;
    expect(run).toMatchObject({ status: "inProgress", items: [{ type: "userMessage", content: [{ type: "text", text: "long task" }] }, expect.anything(), expect.anything()] });

    // The Codex client interrupts the slow one on its thread; the parent's turn goes on and completes.
    expect(await codex.request("turn/interrupt", { threadId: slow, turnId: run.id })).toEqual({});
    await codex.waitFor((m) => m.method === "turn/completed" && m.params.threadId === slow && m.params.turn.status === "interrupted");
    await waitForTerminal(ask, sessionId, turnId);
    await codex.turnCompleted(turnId);

    // Ask: each sub-agent once, in the Ask vocabulary.
    expect(payloadsOf<any>(ask.eventsOf(sessionId), "subagent.completed").map((c) => [c.title, c.status])).toEqual([
      ["quick", "succeeded"],
      ["slow", "interrupted"],
    ]);

    // Codex, live: child threads announced, the parent turn's agent items carry progress and result.
    const items = codex.notifications("item/completed").filter((m) => m.params.turnId === turnId).map((m) => m.params.item);
    const collab = items.filter((i: any) => i.type === "collabAgentToolCall");
    expect(collab.map((i: any) => [i.tool, i.status, i.receiverThreadIds])).toEqual([
      ["spawnAgent", "completed", [quick]],
      ["spawnAgent", "completed", [slow]],
      ["wait", "completed", [quick, slow]],
    ]);
    expect(collab[2].agentsStates).toEqual({ [quick]: { status: "completed", message: "Done: fast task" }, [slow]: { status: "interrupted", message: expect.any(String) } });
    expect(items.filter((i: any) => i.type === "subAgentActivity").map((i: any) => [i.agentThreadId, i.kind])).toEqual([
      [quick, "started"],
      [slow, "started"],
      [quick, "completed"],
      [slow, "interrupted"],
    ]);
    expect(codex.notifications("thread/started").map((m) => m.params.thread.id)).toEqual([quick, slow]);

    // ACP, live: one card per sub-agent, finished as it ended.
    const cards = (id: string) => acp.received.filter((m) => m.method === "session/update" && m.params.update.toolCallId === `subagent-${id}`).map((m) => m.params.update);
    expect(cards(quick)[0]).toMatchObject({ sessionUpdate: "tool_call", title: "Sub-agent: quick", status: "in_progress", _meta: { subagent: { sessionId: quick } } });
    expect(cards(quick).at(-1)).toMatchObject({ status: "completed", rawOutput: { status: "succeeded", response: "Done: fast task" } });
    expect(cards(slow).at(-1)).toMatchObject({ status: "failed", _meta: { subagent: { state: "interrupted" } } });

    // On resume: a second client of each dialect finds the same.
    const codex2 = await gw.codexClient();
    await codex2.initialize();
    const resumed = await codex2.request("thread/resume", { threadId: sessionId });
    const turn = resumed.thread.turns.find((t: any) => t.id === turnId);
    expect(turn.items.filter((i: any) => i.type === "collabAgentToolCall").map((i: any) => [i.tool, i.receiverThreadIds])).toEqual([
      ["spawnAgent", [quick]],
      ["spawnAgent", [slow]],
      ["wait", [quick, slow]],
    ]);
    expect(turn.items.filter((i: any) => i.type === "subAgentActivity").map((i: any) => i.kind)).toEqual(["started", "started", "completed", "interrupted"]);
    const quickThread = await codex2.request("thread/read", { threadId: quick, includeTurns: true });
    expect(quickThread.thread.turns[0]).toMatchObject({ status: "completed" });
    expect(quickThread.thread.turns[0].items.at(-1)).toEqual(expect.objectContaining({ type: "agentMessage", text: "Done: fast task" }));
    expect((await codex2.request("thread/read", { threadId: slow, includeTurns: true })).thread.turns[0].status).toBe("interrupted");

    const acp2 = await RawAcpClient.connect(gw.acpUrl);
    await acp2.initialize();
    const loaded = await acp2.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });
    expect(loaded.error).toBeUndefined();
    const replayed = acp2.received.filter((m) => m.method === "session/update" && String(m.params.update.toolCallId).startsWith("subagent-")).map((m) => m.params.update);
    expect(replayed.filter((u) => u.sessionUpdate === "tool_call_update" && u.status).map((u) => [u.toolCallId, u.status])).toEqual([
      [`subagent-${quick}`, "completed"],
      [`subagent-${slow}`, "failed"],
    ]);

    const ask2 = await gw.client();
    await ask2.request("initialize", { client: { name: "phone", version: "1" } });
    await ask2.request("session/subscribe", { sessionId });
    await waitForTerminal(ask2, sessionId, turnId);
    expect(payloadsOf(ask2.eventsOf(sessionId), "subagent.completed")).toEqual(payloadsOf(ask.eventsOf(sessionId), "subagent.completed"));

    expect(codex.invalid).toEqual([]);
    expect(codex2.invalid).toEqual([]);
    expect(agentMessageProblems(acp.received, acp.sent)).toEqual([]);
    expect(agentMessageProblems(acp2.received, acp2.sent)).toEqual([]);
    expect(ask.invalid).toEqual([]);
    expect(ask2.invalid).toEqual([]);
    await acp.close();
    await acp2.close();
  });

  it("an editor cancels a sub-agent by its child session id; the Codex client on its child thread sees the run end", async () => {
    const ask = await gw.client();
    const sessionId = await openSession(ask);
    const acp = await RawAcpClient.connect(gw.acpUrl);
    await acp.initialize();
    await acp.request("session/load", { sessionId, cwd: gw.cwd, mcpServers: [] });
    const { turnId } = await ask.request("session/send", { sessionId, content: "/subagent-slow 600000 watcher keep watching" });
    const card = await acp.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "tool_call" && m.params.update._meta?.subagent);
    const agentId = card.params.update._meta.subagent.sessionId;
    await acp.next((m) => m.method === "session/update" && m.params.update.toolCallId === card.params.update.toolCallId && m.params.update.content?.length === 2);

    // An editor that resumes the session (nothing replayed) meanwhile gets the card announced with the run's next change (here its end).
    const resumer = await RawAcpClient.connect(gw.acpUrl);
    await resumer.initialize();
    expect((await resumer.request("session/resume", { sessionId, cwd: gw.cwd, mcpServers: [] })).error).toBeUndefined();

    // A terminal attached to the child thread while it runs gets its run live.
    const codex = await gw.codexClient();
    await codex.initialize();
    const child = await codex.request("thread/resume", { threadId: agentId });
    expect(child.thread).toMatchObject({ id: agentId, status: { type: "active", activeFlags: [] }, turns: [expect.objectContaining({ status: "inProgress" })] });
    const childTurnId = child.thread.turns[0].id;
    expect(await codex.requestRaw("turn/start", { threadId: agentId, input: [{ type: "text", text: "more", text_elements: [] }] })).toMatchObject({ error: { code: -32600 } });

    acp.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: agentId } });
    const ended = await acp.next((m) => m.method === "session/update" && m.params.update.toolCallId === card.params.update.toolCallId && m.params.update.status === "failed");
    expect(ended.params.update._meta.subagent.state).toBe("interrupted");
    await codex.waitFor((m) => m.method === "turn/completed" && m.params.threadId === agentId && m.params.turn.id === childTurnId && m.params.turn.status === "interrupted");
    // The parent's turn, which waited for it, completes.
    expect(await waitForTerminal(ask, sessionId, turnId)).toMatchObject({ type: "turn.completed" });
    const resumed = await resumer.next((m) => m.method === "session/update" && m.params.update.toolCallId === card.params.update.toolCallId && m.params.update.status === "failed");
    expect(resumer.received.find((m) => m.params?.update?.toolCallId === card.params.update.toolCallId).params.update).toMatchObject({ sessionUpdate: "tool_call", title: "Sub-agent: watcher" });
    expect(resumed.params.update.rawOutput).toMatchObject({ status: "interrupted" });
    expect(codex.invalid).toEqual([]);
    expect(agentMessageProblems(acp.received, acp.sent)).toEqual([]);
    expect(agentMessageProblems(resumer.received, resumer.sent)).toEqual([]);
    await acp.close();
    await resumer.close();
  });
});
