import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Snapshot } from "../../../generated/tau-v18.js";
import { assistantMessages, errorOf, HostHarness, hostWithSessionPerTest, resultOf, textOf, type TauTestClient, userTexts } from "../../support/tau-client.js";

/**
 * Session mutations and side requests of the embedded Tau host (spec §4.3–§4.6, §9 serialization):
 * settings changes never interrupt, context-replacing mutations interrupt and reject pending input,
 * compaction and rewind publish resets with their structured causes.
 */

let h: HostHarness;
let client: TauTestClient;
let sessionId: string;

hostWithSessionPerTest((fresh) => ({ harness: h, client, sessionId } = fresh));

/** Starts a long `/sleep` turn plus one queued message and waits until both are in place. */
async function runningTurnWithQueuedInput() {
  const since = client.mark();
  const running = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow" });
  await client.waitForTurnRunning(sessionId, undefined, since);
  const queued = client.send("session.queue", { sessionId, text: "queued" });
  await client.waitFor(
    (m) => m.type === "session.pendingUserMessages" && m.sessionId === sessionId && m.state.messages.length === 1,
    "queued message pending",
    { since },
  );
  return { running, queued };
}

describe("session.setReasoning", () => {
  it("publishes a settings.set delta and returns the new settings", async () => {
    const result = await client.call("session.setReasoning", { sessionId, reasoning: "high" });
    expect(result.settings.reasoning).toBe("high");
    const delta = await client.waitForChange(sessionId, (c) => c.type === "settings.set" && c.settings.reasoning === "high", "settings.set reasoning high");
    expect(delta.toRevision).toBe(result.revision);
    const snapshot = await client.snapshot(sessionId);
    expect(snapshot.settings).toEqual(result.settings);
    expect((await client.fail("session.setReasoning", { sessionId, reasoning: "extreme" })).code).toBe("invalid_params");
  });

  it("does not interrupt a running turn", async () => {
    const running = client.send("session.submit", { sessionId, text: "/sleep 1500\nkeep going" });
    await client.waitForTurnRunning(sessionId);
    const result = await client.call("session.setReasoning", { sessionId, reasoning: "low" });
    expect(result.settings.reasoning).toBe("low");
    expect(client.hasResponse(running.id)).toBe(false);
    expect(resultOf(await running.response).turn).toEqual({ status: "completed", stopReason: "stop" });
  });
});

describe("session.setAutoCompactThreshold", () => {
  it("sets and clears the configured threshold; the effective value follows the model's context window", async () => {
    const before = await client.snapshot(sessionId);
    const ceiling = before.bootstrap.model.contextWindow - 16384;
    expect(before.settings.autoCompactThresholdTokens).toBeNull();
    expect(before.settings.effectiveAutoCompactThresholdTokens).toBe(ceiling);

    const set = await client.call("session.setAutoCompactThreshold", { sessionId, thresholdTokens: 60000 });
    expect(set.settings.autoCompactThresholdTokens).toBe(60000);
    expect(set.settings.effectiveAutoCompactThresholdTokens).toBe(Math.min(60000, ceiling));
    await client.waitForChange(sessionId, (c) => c.type === "settings.set" && c.settings.autoCompactThresholdTokens === 60000, "settings.set threshold");

    const cleared = await client.call("session.setAutoCompactThreshold", { sessionId, thresholdTokens: null });
    expect(cleared.settings.autoCompactThresholdTokens).toBeNull();
    expect(cleared.settings.effectiveAutoCompactThresholdTokens).toBe(ceiling);
    expect(cleared.revision).toBeGreaterThan(set.revision);
  });

  it("rejects values under 50,000 and unknown keys (strict params)", async () => {
    expect((await client.fail("session.setAutoCompactThreshold", { sessionId, thresholdTokens: 49999 })).code).toBe("invalid_params");
    expect((await client.fail("session.setAutoCompactThreshold", { sessionId, thresholdTokens: null, force: true })).code).toBe("invalid_params");
  });

  it("does not interrupt a running turn", async () => {
    const running = client.send("session.submit", { sessionId, text: "/sleep 1500\nkeep going" });
    await client.waitForTurnRunning(sessionId);
    await client.call("session.setAutoCompactThreshold", { sessionId, thresholdTokens: 70000 });
    expect(client.hasResponse(running.id)).toBe(false);
    expect(resultOf(await running.response).turn.status).toBe("completed");
  });
});

describe("session.setPersona", () => {
  it("switches persona, keeps the configured threshold, interrupts the turn and rejects pending input", async () => {
    const before = await client.snapshot(sessionId);
    expect(before.catalog.personas.length).toBeGreaterThanOrEqual(2);
    const target = before.catalog.personas.find((p) => p.id !== before.settings.personaId)!.id;
    await client.call("session.setAutoCompactThreshold", { sessionId, thresholdTokens: 80000 });

    const { running, queued } = await runningTurnWithQueuedInput();
    const snapshot = await client.call<Snapshot>("session.setPersona", { sessionId, personaId: target });
    expect(snapshot.settings.personaId).toBe(target);
    expect(snapshot.settings.autoCompactThresholdTokens).toBe(80000);
    expect(snapshot.lifecycle).toBe("idle");
    expect(resultOf(await running.response).turn.status).toBe("aborted");
    expect(errorOf(await queued.response).code).toBe("invalid_request");
  });

  it("fails for an unknown persona", async () => {
    const error = await client.fail("session.setPersona", { sessionId, personaId: "no-such-persona" });
    expect(error.code).toBe("internal_error");
  });
});

describe("session.reload", () => {
  it("returns counts matching the catalog and rejects pending input", async () => {
    const { running, queued } = await runningTurnWithQueuedInput();
    const result = await client.call("session.reload", { sessionId });
    expect(Array.isArray(result.warnings)).toBe(true);
    expect(result.counts).toEqual({
      personas: result.snapshot.catalog.personas.length,
      prompts: result.snapshot.catalog.prompts.length,
      skills: result.snapshot.catalog.skills.length,
    });
    expect(result.counts.personas).toBeGreaterThanOrEqual(2);
    expect(resultOf(await running.response).turn.status).toBe("aborted");
    expect(errorOf(await queued.response).code).toBe("invalid_request");
  });
});

describe("session.compact", () => {
  it("publishes a reset with a compaction cause and a new epoch", async () => {
    await client.call("session.submit", { sessionId, text: "first turn" });
    await client.call("session.submit", { sessionId, text: "second turn" });
    const before = await client.snapshot(sessionId);
    const since = client.mark();

    const result = await client.call("session.compact", { sessionId, mode: "summary-and-last" });
    expect(result.compactionMessage.trim().length).toBeGreaterThan(0);
    expect(typeof result.includedLastAssistant).toBe("boolean");
    expect(result.snapshot.timeline.epoch).toBe(before.timeline.epoch + 1);
    expect(result.snapshot.revision).toBeGreaterThan(before.revision);
    const operations = Object.values(result.snapshot.operations) as any[];
    expect(operations.some((o) => o.kind === "manual-compaction" && o.status === "succeeded")).toBe(true);

    const reset = await client.waitFor(
      (m) => m.type === "session.delta" && m.sessionId === sessionId && m.delta.type === "snapshot.reset",
      "compaction reset",
      { since },
    );
    expect(reset.cause).toMatchObject({ type: "compaction", previousEpoch: before.timeline.epoch, epoch: before.timeline.epoch + 1, kind: "manual" });
    expect(reset.delta.snapshot.revision).toBe(reset.toRevision);
    expect(reset.delta.snapshot.timeline.epoch).toBe(before.timeline.epoch + 1);

    // The session keeps working after compaction.
    expect((await client.call("session.submit", { sessionId, text: "after" })).turn.status).toBe("completed");
  });

  it("interrupts a running turn and rejects pending input", async () => {
    await client.call("session.submit", { sessionId, text: "some history" });
    const { running, queued } = await runningTurnWithQueuedInput();
    await client.call("session.compact", { sessionId, mode: "summary-only" });
    expect(resultOf(await running.response).turn.status).toBe("aborted");
    expect(errorOf(await queued.response).code).toBe("invalid_request");
  });
});

describe("session.rewind", () => {
  it("removes the chosen user entry and everything after it, with a rewind reset", async () => {
    await client.call("session.submit", { sessionId, text: "one", historyEntryId: "h1" });
    await client.call("session.submit", { sessionId, text: "two", historyEntryId: "h2" });
    await client.call("session.submit", { sessionId, text: "three", historyEntryId: "h3" });
    const before = await client.snapshot(sessionId);
    const since = client.mark();

    const result = await client.call("session.rewind", { sessionId, historyEntryId: "h2" });
    expect(result.historyEntryId).toBe("h2");
    expect(result.text).toBe("two");
    expect(result.removedEntryIds).toEqual(expect.arrayContaining(["h2", "h3"]));
    const remainingIds = new Set(result.snapshot.messages.map((m: any) => m.id));
    for (const id of result.removedEntryIds) expect(remainingIds.has(id)).toBe(false);
    expect(userTexts(result.snapshot)).toEqual(["one"]);
    expect(assistantMessages(result.snapshot).map(textOf)).toEqual(["You said: one"]);
    expect(result.snapshot.timeline.epoch).toBe(before.timeline.epoch);
    expect(result.snapshot.timeline.sequence).toBe(before.timeline.sequence);

    const reset = await client.waitFor(
      (m) => m.type === "session.delta" && m.sessionId === sessionId && m.delta.type === "snapshot.reset",
      "rewind reset",
      { since },
    );
    expect(reset.cause).toMatchObject({ type: "rewind", epoch: before.timeline.epoch });
    expect(reset.cause.cutoffSequence).toBeLessThanOrEqual(before.timeline.sequence);
    expect(reset.delta.snapshot.timeline.items.every((i: any) => i.sequence <= reset.cause.cutoffSequence)).toBe(true);
    expect(reset.delta.snapshot.revision).toBe(reset.toRevision);
  });

  it("is busy while a turn is active or input is pending", async () => {
    await client.call("session.submit", { sessionId, text: "one", historyEntryId: "h1" });
    const { running, queued } = await runningTurnWithQueuedInput();
    expect((await client.fail("session.rewind", { sessionId, historyEntryId: "h1" })).code).toBe("busy");
    // Rewind does not interrupt: the turn is still running afterwards.
    expect(client.hasResponse(running.id)).toBe(false);
    await client.call("session.cancelPendingMessages", { sessionId });
    await client.call("session.interrupt", { sessionId });
    await running.response;
    await queued.response;
    expect((await client.call("session.rewind", { sessionId, historyEntryId: "h1" })).text).toBe("one");
  });

  it("fails for an unknown history entry as Tau does: the handler's failure, \"rewind failed\"", async () => {
    await client.call("session.submit", { sessionId, text: "one" });
    expect(await client.fail("session.rewind", { sessionId, historyEntryId: "no-such-entry" })).toEqual({
      code: "internal_error",
      message: "session protocol request failed",
      data: { cause: "rewind failed" },
    });
  });

  it("lists every history entry it removed in removedEntryIds: the user's, the assistant's and the tool results", async () => {
    await client.call("session.submit", { sessionId, text: "one", historyEntryId: "h1" });
    await client.call("session.submit", { sessionId, text: "/bash echo two", historyEntryId: "h2" });
    await client.call("session.submit", { sessionId, text: "three", historyEntryId: "h3" });
    const before = await client.snapshot(sessionId);
    const from = before.messages.findIndex((m) => m.id === "h2");
    const removed = before.messages.slice(from);
    expect(new Set(removed.map((m) => m.message.role))).toEqual(new Set(["user", "assistant", "toolResult"]));

    const result = await client.call("session.rewind", { sessionId, historyEntryId: "h2" });
    expect(result.removedEntryIds).toEqual(removed.map((m) => m.id));
    expect(result.snapshot.messages.map((m: { id: string }) => m.id)).toEqual(before.messages.slice(0, from).map((m) => m.id));
  });
});

describe("session.resolvePrompt", () => {
  it("returns the body of a catalog prompt", async () => {
    const snapshot = await client.snapshot(sessionId);
    expect(snapshot.catalog.prompts.length).toBeGreaterThan(0);
    const promptId = snapshot.catalog.prompts[0].id;
    const result = await client.call("session.resolvePrompt", { sessionId, promptId });
    expect(result.promptId).toBe(promptId);
    expect(typeof result.text).toBe("string");
    expect(result.text.length).toBeGreaterThan(0);
    expect((await client.request("session.resolvePrompt", { sessionId, promptId: "no-such-prompt" })).ok).toBe(false);
  });
});

describe("session.autocompletePaths", () => {
  it("completes real paths under the session cwd, directories ending with /", async () => {
    writeFileSync(join(h.cwd, "alpha.txt"), "a");
    mkdirSync(join(h.cwd, "alpine"));
    writeFileSync(join(h.cwd, "alpine", "inner.txt"), "i");
    writeFileSync(join(h.cwd, "beta.md"), "b");
    // Paths may be reported relative to cwd or absolute; compare them relative to cwd.
    const relative = (paths: string[]) => paths.map((p) => (p.startsWith(h.cwd + "/") ? p.slice(h.cwd.length + 1) : p));

    const al = relative((await client.call("session.autocompletePaths", { sessionId, query: "al", limit: 10 })).paths);
    expect(al).toEqual(expect.arrayContaining(["alpha.txt", "alpine/"]));
    expect(al).not.toContain("beta.md");

    const inner = relative((await client.call("session.autocompletePaths", { sessionId, query: "alpine/", limit: 10 })).paths);
    expect(inner).toContain("alpine/inner.txt");

    const limited = (await client.call("session.autocompletePaths", { sessionId, query: "", limit: 1 })).paths;
    expect(limited).toHaveLength(1);
    expect((await client.fail("session.autocompletePaths", { sessionId, query: "", limit: 101 })).code).toBe("invalid_params");
  });
});

describe("session.interruptSubagent", () => {
  it("reports an unknown subagent as not found", async () => {
    expect(await client.call("session.interruptSubagent", { sessionId, subagentId: "no-such-agent" })).toEqual({ found: false });
  });
});

describe("session.ephemeral.*", () => {
  it("creates a context, answers on threads, is busy on the same thread, and closes", async () => {
    const { contextId } = await client.call("session.ephemeral.create", { sessionId, instructions: "Answer briefly.", tools: [] });
    expect(typeof contextId).toBe("string");

    const answer = await client.call("session.ephemeral.submit", { sessionId, contextId, threadId: "t1", message: "hello" });
    expect(answer.threadId).toBe("t1");
    expect(answer.response).toContain("hello");

    const slow = client.send("session.ephemeral.submit", { sessionId, contextId, threadId: "t1", message: "/sleep 1000\nslow" });
    const clash = client.send("session.ephemeral.submit", { sessionId, contextId, threadId: "t1", message: "clash" });
    const other = client.send("session.ephemeral.submit", { sessionId, contextId, threadId: "t2", message: "parallel" });
    expect(errorOf(await clash.response).code).toBe("busy");
    expect(resultOf(await other.response).threadId).toBe("t2");
    expect(resultOf(await slow.response).response).toContain("slow");

    // Ephemeral work is not part of the session snapshot.
    const snapshot = await client.snapshot(sessionId);
    expect(snapshot.messages.some((m) => m.message.role === "user")).toBe(false);

    expect(await client.call("session.ephemeral.close", { sessionId, contextId })).toEqual({ closed: true });
    expect(await client.call("session.ephemeral.close", { sessionId, contextId })).toEqual({ closed: false });
    expect((await client.request("session.ephemeral.submit", { sessionId, contextId, threadId: "t1", message: "gone" })).ok).toBe(false);
  });
});

describe("session.sample", () => {
  it("returns a scripted assistant message without changing the session", async () => {
    const before = await client.snapshot(sessionId);
    const since = client.mark();
    const result = await client.call("session.sample", {
      sessionId,
      context: { systemPrompt: "Be brief.", messages: [{ role: "user", content: "ping", timestamp: Date.now() }] },
      options: {},
    });
    expect(result.message).toMatchObject({ role: "assistant", api: "scripted", provider: "tau-gateway", model: "scripted-1" });
    const after = await client.snapshot(sessionId);
    expect(after.revision).toBe(before.revision);
    expect(after.costTotal).toBe(before.costTotal);
    expect(client.deltas(sessionId, since)).toEqual([]);
  });
});
