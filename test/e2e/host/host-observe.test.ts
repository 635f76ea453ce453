import { afterEach, describe, expect, it } from "vitest";
import type { SessionDeltaMessage, Snapshot } from "../../../generated/tau-v18.js";
import { applyDelta } from "../../../src/tau/delta-applier.js";
import { HostHarness, resultOf, textOf } from "../../support/tau-client.js";

/**
 * Observation on the embedded Tau host (spec §4.1, §9): baselines and later deltas, several
 * observers, unobserve, not_found, and recovery of persisted sessions after a restart.
 */

let h: HostHarness;

afterEach(async () => {
  await h.dispose();
});

async function setup() {
  h = new HostHarness();
  await h.start();
  return h.connectWithSession({ name: "owner" });
}

describe("session.observe", () => {
  it("gives two observers the same deltas", async () => {
    const { client: owner, sessionId } = await setup();
    const a = await h.connect("a");
    const b = await h.connect("b");
    const baseA = await a.call("session.observe", { sessionId });
    const baseB = await b.call("session.observe", { sessionId });
    expect(baseA.snapshot).toEqual(baseB.snapshot);

    const sinceA = a.mark();
    const sinceB = b.mark();
    await owner.call("session.submit", { sessionId, text: "shared view" });
    const final = await owner.snapshot(sessionId);
    const reached = (m: any) => m.type === "session.delta" && m.sessionId === sessionId && m.toRevision === final.revision;
    await a.waitFor(reached, "observer a reaches the final revision", { since: sinceA });
    await b.waitFor(reached, "observer b reaches the final revision", { since: sinceB });
    const deltasA = a.deltas(sessionId, sinceA);
    expect(deltasA.length).toBeGreaterThan(0);
    expect(b.deltas(sessionId, sinceB)).toEqual(deltasA);
    // Revisions are continuous from the baseline.
    let revision = baseA.snapshot.revision;
    for (const d of deltasA) {
      expect(d.fromRevision).toBe(revision);
      expect(d.toRevision).toBeGreaterThan(revision);
      revision = d.toRevision;
    }
  });

  it("returns a baseline and then only newer deltas", async () => {
    const { client: owner, sessionId } = await setup();
    await owner.call("session.submit", { sessionId, text: "before observing" });
    const late = await h.connect("late");
    const baseline = await late.call("session.observe", { sessionId });
    expect(baseline.snapshot.sessionId).toBe(sessionId);
    expect(assistantCount(baseline.snapshot)).toBe(1);
    expect(baseline.pendingUserMessages.messages).toEqual([]);
    expect(baseline.subagentActivities.agents).toEqual({});

    await owner.call("session.submit", { sessionId, text: "after observing" });
    const final = await owner.snapshot(sessionId);
    await late.waitFor((m) => m.type === "session.delta" && m.toRevision === final.revision, "late observer reaches the final revision");
    const deltas = late.deltas(sessionId);
    expect(deltas.every((d) => d.toRevision > baseline.snapshot.revision)).toBe(true);
    expect(deltas[0].fromRevision).toBe(baseline.snapshot.revision);
  });

  it("answers not_found with data.sessionId for unknown sessions", async () => {
    const { client } = await setup();
    for (const method of ["session.observe", "session.snapshot", "session.unobserve", "session.interrupt"]) {
      const error = await client.fail(method, { sessionId: "no-such-session" });
      expect(error.code, method).toBe("not_found");
      expect(error.data, method).toEqual({ sessionId: "no-such-session" });
    }
  });

  it("lists sessions with their lifecycle", async () => {
    const { client, sessionId } = await setup();
    const turn = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow" });
    await client.waitForTurnRunning(sessionId);
    const listed = await client.call("session.list", {});
    expect(listed.sessions).toContainEqual({ sessionId, lifecycle: "running" });
    await client.call("session.interrupt", { sessionId });
    await turn.response;
    expect((await client.call("session.list", { ignored: true })).sessions).toContainEqual({ sessionId, lifecycle: "idle" });
  });
});

describe("observation details", () => {
  it("an observe during a streaming turn gives a baseline the later deltas continue without a gap", async () => {
    h = new HostHarness();
    await h.start({ streamDelayMs: 5 });
    const { client: owner, sessionId } = await h.connectWithSession({ name: "owner" });
    const long = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const turn = owner.send("session.submit", { sessionId, text: long });
    await owner.waitForChange(sessionId, (c) => c.type === "message.content.append", "streaming started");
    const late = await h.connect("late");
    const observe = late.send("session.observe", { sessionId });
    let installed: Snapshot = resultOf(await observe.response).snapshot;
    expect(installed.lifecycle).toBe("running");
    await turn.response;
    const final = await owner.snapshot(sessionId);
    if (installed.revision < final.revision) {
      await late.waitFor((m) => m.type === "session.delta" && m.toRevision === final.revision, "late observer reaches the final revision");
    }
    const after = late.messages.slice(late.responseIndex(observe.id) + 1);
    for (const m of after) if (m.type === "session.delta") installed = applyDelta(installed, m as SessionDeltaMessage).snapshot;
    expect(installed).toEqual(final);
  });

  it("a connection that only names a session in a request also receives its deltas", async () => {
    const { client: owner, sessionId } = await setup();
    const peeker = await h.connect("peeker");
    const baseline = await peeker.snapshot(sessionId);
    await owner.call("session.submit", { sessionId, text: "seen by the peeker" });
    const final = await owner.snapshot(sessionId);
    await peeker.waitFor((m) => m.type === "session.delta" && m.toRevision === final.revision, "peeker receives the turn's deltas");
    expect(peeker.deltas(sessionId)[0].fromRevision).toBe(baseline.revision);
  });

  it("a turn keeps running when the submitting connection closes", async () => {
    const { client: owner, sessionId } = await setup();
    const watcher = await h.connect("watcher");
    await watcher.call("session.observe", { sessionId });
    owner.send("session.submit", { sessionId, text: "/sleep 300\ncarry on", historyEntryId: "orphan" });
    await owner.waitForTurnRunning(sessionId, "orphan");
    await owner.close();
    const settled = await watcher.waitForChange(sessionId, (c) => c.type === "turn.set" && c.turn.userHistoryEntryId === "orphan" && c.turn.state === "settled", "orphan turn settled");
    const change = settled.delta.type === "snapshot.patch" ? settled.delta.changes.find((c) => c.type === "turn.set" && c.turn.state === "settled") : undefined;
    expect(change).toMatchObject({ turn: { outcome: { status: "completed", stopReason: "stop" } } });
  });
});

describe("session.create", () => {
  it("reflects its params in the first snapshot", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    const { sessionId } = await client.call("session.create", {
      executionEnvironment: { kind: "local", cwd: h.cwd, env: { PROJECT: "demo" } },
      attributes: { source: "sdk", repository: "github.com/o/r" },
      reasoning: "high",
      autoCompactThresholdTokens: 60000,
    });
    const snapshot = await client.snapshot(sessionId);
    expect(snapshot).toMatchObject({
      sessionId,
      attributes: { source: "sdk", repository: "github.com/o/r" },
      lifecycle: "idle",
      costTotal: 0,
      executionEnvironment: { kind: "local", cwd: h.cwd, env: { PROJECT: "demo" } },
      settings: { reasoning: "high", autoCompactThresholdTokens: 60000, effectiveAutoCompactThresholdTokens: Math.min(60000, snapshot.bootstrap.model.contextWindow - 16384) },
      turns: {},
      tools: {},
    });
    expect(snapshot.catalog.personas.map((p) => p.id)).toContain(snapshot.settings.personaId);
    // The session's env reaches session.exec.
    const exec = await client.call("session.exec", { sessionId, execId: "e", command: 'printf "%s" "$PROJECT"' });
    expect(exec.stdout).toBe("demo");
  });

  it("rejects a non-local environment with invalid_params and a missing cwd", async () => {
    h = new HostHarness();
    await h.start();
    const client = await h.connect();
    const sprite = await client.fail("session.create", { executionEnvironment: { kind: "fly-sprite", spriteName: "box", cwd: "/work" }, attributes: {} });
    expect(sprite.code).toBe("invalid_params");
    const missing = await client.request("session.create", { executionEnvironment: { kind: "local", cwd: `${h.cwd}/does-not-exist` }, attributes: {} });
    expect(missing.ok).toBe(false);
    expect((await client.call("session.list", {})).sessions).toEqual([]);
  });
});

describe("session.unobserve", () => {
  it("stops deltas to that connection only", async () => {
    const { client: owner, sessionId } = await setup();
    const watcher = await h.connect("watcher");
    await watcher.call("session.observe", { sessionId });
    expect(await watcher.call("session.unobserve", { sessionId })).toEqual({ unobserved: true });
    const since = watcher.mark();
    await owner.call("session.submit", { sessionId, text: "unseen" });
    // Anything sent for the turn would arrive before this response on the same connection.
    await watcher.call("session.list", {});
    expect(watcher.deltas(sessionId, since)).toEqual([]);
    expect(owner.deltas(sessionId).length).toBeGreaterThan(0);
    // A second unobserve has nothing to remove.
    expect((await watcher.fail("session.unobserve", { sessionId })).code).toBe("not_found");
  });
});

describe("recovery with a state directory", () => {
  it("brings sessions back idle, with the interrupted turn settled as aborted", async () => {
    h = new HostHarness();
    const stateDir = h.tempDir("tau-host-state-");
    await h.start({ stateDir });
    const { client, sessionId } = await h.connectWithSession({ name: "before" });
    await client.call("session.setAutoCompactThreshold", { sessionId, thresholdTokens: 90000 });
    await client.call("session.submit", { sessionId, text: "kept", historyEntryId: "done" });
    const abandoned = client.send("session.submit", { sessionId, text: "/sleep 10000\ncut short", historyEntryId: "cut" });
    await client.waitForTurnRunning(sessionId, "cut");
    const queued = client.send("session.queue", { sessionId, text: "never runs" });
    await client.waitFor((m) => m.type === "session.pendingUserMessages" && m.state.messages.length === 1, "queued message pending");

    await h.closeHost();
    await client.closed();
    await abandoned.response.catch(() => undefined);
    await queued.response.catch(() => undefined);

    await h.start({ stateDir });
    const after = await h.connect("after");
    expect((await after.call("session.list", {})).sessions).toContainEqual({ sessionId, lifecycle: "idle" });
    const observed = await after.call("session.observe", { sessionId });
    const snapshot = observed.snapshot;
    expect(snapshot.lifecycle).toBe("idle");
    expect(snapshot.turns.done).toEqual({ userHistoryEntryId: "done", state: "settled", outcome: { status: "completed", stopReason: "stop" } });
    expect(snapshot.turns.cut).toEqual({ userHistoryEntryId: "cut", state: "settled", outcome: { status: "aborted", stopReason: "aborted" } });
    expect(snapshot.settings.autoCompactThresholdTokens).toBe(90000);
    const texts = snapshot.messages.filter((m: any) => m.message.role === "user").map((m: any) => textOf(m.message));
    expect(texts).toEqual(["kept", "/sleep 10000\ncut short"]);
    expect(observed.pendingUserMessages.messages).toEqual([]);

    // The recovered session runs new turns.
    expect(resultOf(await after.request("session.submit", { sessionId, text: "resumed" })).turn.status).toBe("completed");
  });
});

function assistantCount(snapshot: any): number {
  return snapshot.messages.filter((m: any) => m.message.role === "assistant").length;
}
