import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CodexMessage } from "../../support/codex-client.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";

/**
 * A Codex client that loaded only the parent thread hears its child threads' runs, as the Codex
 * app-server subscribes a parent's connections to the threads it spawns: the terminal UI (0.171.0)
 * previews a running sub-agent in `/subagents` from the child thread's notifications it received
 * without loading that thread. A client that also loaded the child hears each of them once.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw?.stop());

async function parentClient() {
  const codex = await gw.codexClient();
  await codex.initialize();
  const { thread } = await codex.request("thread/start", {});
  return { codex, threadId: thread.id as string };
}

const ofThread = (messages: CodexMessage[], threadId: string) => messages.filter((m) => !("id" in m) && (m.params?.threadId ?? m.params?.thread?.id) === threadId);

describe("child threads heard by the parent thread's Codex clients", () => {
  it("a client of the parent gets each child thread's run live without loading the child", async () => {
    const { codex, threadId } = await parentClient();
    const { turn } = await codex.request("turn/start", { threadId, input: [{ type: "text", text: "/subagent quick fast task\nthen", text_elements: [] }] });
    await codex.turnCompleted(turn.id);
    const [started] = codex.notifications("thread/started").filter((m) => m.params.thread.parentThreadId === threadId);
    const child = started!.params.thread.id as string;

    const heard = ofThread(codex.received, child);
    expect(heard.map((m) => m.method)).toEqual([
      "thread/started",
      "thread/status/changed",
      "turn/started",
      ...heard.filter((m) => m.method.startsWith("item/")).map((m) => m.method),
      "thread/status/changed",
      "turn/completed",
    ]);
    const { thread } = await codex.request("thread/read", { threadId: child, includeTurns: true });
    const [run] = thread.turns;
    // Announced as Codex announces a running turn (none of its items loaded: not the default "full",
    // which says the run has none), ended with its answer as the summary view, each with its times.
    expect(heard.find((m) => m.method === "turn/started")!.params.turn).toEqual({ id: run.id, rootTurnId: run.id, items: [], itemsView: "notLoaded", status: "inProgress", error: null, startedAt: run.startedAt });
    const answer = run.items.at(-1);
    expect(heard.at(-1)!.params.turn).toEqual({
      id: run.id,
      rootTurnId: run.id,
      items: [answer],
      itemsView: "summary",
      status: "completed",
      error: null,
      startedAt: run.startedAt,
      completedAt: run.completedAt,
      durationMs: run.durationMs,
    });
    expect(run).toMatchObject({ rootTurnId: run.id, itemsView: "full", status: "completed" });
    // The run's items as the live notifications carried them are the items thread/read shows (the
    // task input aside): what it said while it ran is commentary (an agent message of no phase
    // would read as the answer, and the terminal UI would stop showing the run as working); once
    // it has succeeded, what it said last, its response, is the answer.
    const completed = heard.filter((m) => m.method === "item/completed").map((m) => m.params.item);
    const said = completed.filter((i) => i.type === "agentMessage");
    expect(said.length).toBeGreaterThan(0);
    expect(said.every((i) => i.phase === "commentary")).toBe(true);
    expect(completed.at(-1)).toMatchObject({ type: "agentMessage", text: "Done: fast task" });
    expect(run.items.filter((i: any) => i.type !== "userMessage")).toEqual([...completed.slice(0, -1), { ...completed.at(-1), phase: "final_answer" }]);
    expect(heard.filter((m) => m.method.startsWith("item/")).every((m) => m.params.turnId === run.id)).toBe(true);
    expect(codex.invalid).toEqual([]);
  });

  it("a child thread takes no turn/start or turn/steer, from a client of its parent or from another, while the parent thread takes them", async () => {
    const { codex, threadId } = await parentClient();
    const { turn } = await codex.request("turn/start", { threadId, input: [{ type: "text", text: "/subagent-slow 600000 slow long task\nthen", text_elements: [] }] });
    const working = await codex.waitFor((m) => m.method === "item/completed" && m.params.threadId !== threadId && m.params.item.type === "agentMessage" && m.params.item.text === "Working on slow…");
    const child = working.params.threadId as string;
    const other = await gw.codexClient();
    await other.initialize();
    for (const client of [codex, other]) {
      const started = await client.requestRaw("turn/start", { threadId: child, input: [{ type: "text", text: "work", text_elements: [] }] });
      expect(started.error).toMatchObject({ code: -32600, message: `cannot start a turn on the thread of sub-agent ${child}: Tau gives a sub-agent work only through its parent thread` });
      const steered = await client.requestRaw("turn/steer", { threadId: child, expectedTurnId: "x", input: [{ type: "text", text: "work", text_elements: [] }] });
      expect(steered.error).toMatchObject({ code: -32600, message: `cannot steer the thread of sub-agent ${child}: Tau gives a sub-agent work only through its parent thread` });
    }
    // The parent's own turn still takes a steer, and ends when interrupted.
    expect(await codex.request("turn/steer", { threadId, expectedTurnId: turn.id, input: [{ type: "text", text: "and more", text_elements: [] }] })).toEqual({ turnId: turn.id });
    await codex.request("turn/interrupt", { threadId, turnId: turn.id });
    await codex.turnCompleted(turn.id);
    expect([...codex.invalid, ...other.invalid]).toEqual([]);
  });

  it("a client that loaded the parent and then the child hears each of the child's notifications once", async () => {
    const { codex, threadId } = await parentClient();
    const { turn } = await codex.request("turn/start", { threadId, input: [{ type: "text", text: "/subagent-slow 600000 slow long task\nthen", text_elements: [] }] });
    const working = await codex.waitFor((m) => m.method === "item/completed" && m.params.threadId !== threadId && m.params.item.type === "agentMessage" && m.params.item.text === "Working on slow…");
    const child = working.params.threadId as string;

    const resumed = await codex.request("thread/resume", { threadId: child });
    const runId = resumed.thread.turns[0].id as string;
    expect(await codex.request("turn/interrupt", { threadId: child, turnId: runId })).toEqual({});
    await codex.waitFor((m) => m.method === "turn/completed" && m.params.threadId === child);
    await codex.turnCompleted(turn.id);

    const heard = ofThread(codex.received, child);
    expect(heard.filter((m) => m.method === "turn/started")).toHaveLength(1);
    expect(heard.filter((m) => m.method === "turn/completed").map((m) => m.params.turn)).toEqual([expect.objectContaining({ id: runId, status: "interrupted" })]);
    const itemIds = heard.filter((m) => m.method === "item/completed").map((m) => m.params.item.id);
    expect(new Set(itemIds).size).toBe(itemIds.length);
    expect(codex.invalid).toEqual([]);
  });
});
