import { describe, expect, it } from "vitest";
import { assistantMessages, hostWithSessionPerTest, resultOf, textOf, type TauTestClient } from "../../support/tau-client.js";

/**
 * Sub-agents of the embedded host (spec §4.6, §5.8, §5.11, §6.3): the /subagent directives start
 * them through spawn_agent, their runs stream activities on session.subagentActivities and end in
 * the snapshot's AgentRun; session.interruptSubagent stops one without touching the main turn.
 * Every message is checked against the Tau v18 schema by the test client.
 */

let client: TauTestClient;
let sessionId: string;

hostWithSessionPerTest((fresh) => ({ client, sessionId } = fresh));

const activityMessages = () => client.messages.filter((m) => m.type === "session.subagentActivities" && m.sessionId === sessionId);
const agentsOf = async () => Object.values((await client.snapshot(sessionId)).agents) as any[];

/** Tau's rules for the activity channel: revisions grow, agent ids are unique per message, at most 64 activities. */
function expectActivityRules(): void {
  const revisions = activityMessages().map((m) => m.revision);
  expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
  expect(new Set(revisions).size).toBe(revisions.length);
  for (const m of activityMessages()) {
    const ids = m.changes.map((c: any) => c.agentId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of m.changes) if (c.type === "agent.set") expect(c.state.activities.length).toBeLessThanOrEqual(64);
  }
}

describe("/subagent", () => {
  it("starts a sub-agent whose run streams activities and succeeds with a response, usage and cost; the turn waits for it", async () => {
    const result = await client.call("session.submit", { sessionId, text: "/subagent docs read the docs\nthen answer" });
    expect(result.turn).toEqual({ status: "completed", stopReason: "stop" });
    const [agent] = await agentsOf();
    expect(agent).toMatchObject({
      title: "docs",
      availability: "idle",
      model: { provider: "tau-gateway", id: "scripted-1" },
      run: { revision: 1, status: "succeeded", response: "Done: read the docs", interruptRequested: false },
      usage: { input: 4, output: 4, contextWindow: 200000 },
    });
    expect(agent.costTotal).toBeCloseTo(8e-6, 12);
    const snapshot = await client.snapshot(sessionId);
    // The session's cost includes the sub-agent's.
    expect(snapshot.costTotal).toBeGreaterThan(agent.costTotal);
    const spawn = Object.values(snapshot.tools).find((t: any) => t.toolName === "spawn_agent") as any;
    const result_ = snapshot.messages.find((m) => m.id === spawn.resultMessageId)!.message as any;
    expect(result_.details).toEqual({ agentId: agent.id });
    expect(Object.values(snapshot.tools).map((t: any) => [t.toolName, t.status])).toEqual([
      ["spawn_agent", "succeeded"],
      ["wait_for_agents", "succeeded"],
    ]);
    expect(textOf(assistantMessages(snapshot).at(-1))).toContain("docs succeeded: Done: read the docs");

    const lists = activityMessages().flatMap((m) => m.changes.filter((c: any) => c.agentId === agent.id).map((c: any) => c.state.activities.map((a: any) => a.type)));
    expect(lists).toEqual([[], ["tool"], ["tool", "assistant"]]);
    expectActivityRules();
    // The channel's baseline on observe holds the list as it stands.
    const observed = await client.call("session.observe", { sessionId });
    expect(observed.subagentActivities.agents[agent.id]).toEqual({ runRevision: 1, activities: [expect.objectContaining({ type: "tool" }), { type: "assistant", text: "Done: read the docs" }] });
    expect(observed.subagentActivities.revision).toBe(activityMessages().at(-1).revision);
  });

  it("fails with the scripted message", async () => {
    await client.call("session.submit", { sessionId, text: "/subagent-fail broken it broke" });
    const [agent] = await agentsOf();
    expect(agent.run).toMatchObject({ status: "failed", failure: { kind: "runtime-error", message: "it broke" } });
    expectActivityRules();
  });

  it("runs two at once; session.interruptSubagent stops the slow one through the mutation queue and the turn goes on", async () => {
    const turn = client.send("session.submit", { sessionId, text: "/subagent quick fast task\n/subagent-slow 600000 slow long task\nboth" });
    const working = await client.waitFor((m) => m.type === "session.subagentActivities" && m.changes.some((c: any) => c.state?.activities.some((a: any) => a.text === "Working on slow…")), "the slow sub-agent at work");
    const slowId = working.changes[0].agentId;
    const quick = await client.waitFor((m) => m.type === "session.delta" && m.delta.changes?.some((c: any) => c.type === "agent.set" && c.agent.title === "quick" && c.agent.run.status === "succeeded"), "the quick sub-agent to succeed");
    expect(quick).toBeDefined();
    expect(client.hasResponse(turn.id)).toBe(false);

    expect(await client.call("session.interruptSubagent", { sessionId, subagentId: slowId })).toEqual({ found: true });
    const result = resultOf(await turn.response);
    expect(result.turn).toEqual({ status: "completed", stopReason: "stop" });
    const agents = await agentsOf();
    expect(agents.map((a) => [a.title, a.run.status])).toEqual([
      ["quick", "succeeded"],
      ["slow", "interrupted"],
    ]);
    expect(agents[1].run).toMatchObject({ interruptRequested: true, failure: { kind: "interrupted" } });
    expect(textOf(assistantMessages(await client.snapshot(sessionId)).at(-1))).toContain("slow was interrupted");
    expectActivityRules();
  });

  it("outlives session.interrupt, which ends only the turn", async () => {
    const turn = client.send("session.submit", { sessionId, text: "/subagent-slow 600000 watcher keep watching" });
    const working = await client.waitFor((m) => m.type === "session.subagentActivities" && m.changes.some((c: any) => c.state?.activities.length === 2), "the watcher at work");
    await client.call("session.interrupt", { sessionId });
    expect(resultOf(await turn.response).turn.status).toBe("aborted");
    expect((await agentsOf())[0].run.status).toBe("running");
    expect(await client.call("session.interruptSubagent", { sessionId, subagentId: working.changes[0].agentId })).toEqual({ found: true });
    expect((await agentsOf())[0].run.status).toBe("interrupted");
    // Found, with nothing left to stop.
    expect(await client.call("session.interruptSubagent", { sessionId, subagentId: working.changes[0].agentId })).toEqual({ found: true });
  });

  it("outlives a compaction, which keeps the session's sub-agents", async () => {
    await client.call("session.submit", { sessionId, text: "some history first" });
    const turn = client.send("session.submit", { sessionId, text: "/subagent-slow 600000 keeper keep going" });
    const working = await client.waitFor((m) => m.type === "session.subagentActivities" && m.changes.some((c: any) => c.state?.activities.length === 2), "the keeper at work");
    await client.call("session.compact", { sessionId, mode: "summary-only" });
    expect(resultOf(await turn.response).turn.status).toBe("aborted");
    expect((await agentsOf())[0]).toMatchObject({ title: "keeper", run: { status: "running" } });
    await client.call("session.interruptSubagent", { sessionId, subagentId: working.changes[0].agentId });
    expect((await agentsOf())[0].run.status).toBe("interrupted");
  });

  it("interruptSubagent of an unknown id finds none; a malformed directive fails the turn saying why", async () => {
    expect(await client.call("session.interruptSubagent", { sessionId, subagentId: "nobody" })).toEqual({ found: false });
    const result = await client.call("session.submit", { sessionId, text: "/subagent lonely" });
    expect(result.turn).toEqual({ status: "failed", stopReason: "error", errorMessage: 'invalid directive "/subagent lonely": a task is required' });
  });
});
