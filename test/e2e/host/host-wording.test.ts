import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorOf, HostHarness, pause, type TauTestClient } from "../../support/tau-client.js";

/**
 * The embedded host answers in Tau v18's own words (spec §3): clients match on the message and
 * `data` of these errors, so they are checked to the letter, over a real socket.
 */

let h: HostHarness;
let client: TauTestClient;
let sessionId: string;

beforeEach(async () => {
  h = new HostHarness();
  await h.start();
  ({ client, sessionId } = await h.connectWithSession());
});

afterEach(async () => {
  await h.dispose();
});

/** Schema-valid params naming `id` for every method that takes a session. */
const sessionParams = (id: string): Record<string, Record<string, unknown>> => ({
  "session.observe": { sessionId: id },
  "session.unobserve": { sessionId: id },
  "session.record": { sessionId: id, text: "hello" },
  "session.submit": { sessionId: id, text: "hello" },
  "session.queue": { sessionId: id, text: "hello" },
  "session.steer": { sessionId: id, text: "hello" },
  "session.cancelPendingMessages": { sessionId: id },
  "session.retry": { sessionId: id },
  "session.exec": { sessionId: id, execId: "e1", command: "true" },
  "session.cancelExec": { sessionId: id, execId: "e1" },
  "session.sample": { sessionId: id, context: { systemPrompt: "", messages: [] }, options: {} },
  "session.interrupt": { sessionId: id },
  "session.snapshot": { sessionId: id },
  "session.setReasoning": { sessionId: id, reasoning: "low" },
  "session.setAutoCompactThreshold": { sessionId: id, thresholdTokens: null },
  "session.setPersona": { sessionId: id, personaId: "default" },
  "session.resolvePrompt": { sessionId: id, promptId: "p1" },
  "session.autocompletePaths": { sessionId: id, query: "", limit: 5 },
  "session.reload": { sessionId: id },
  "session.compact": { sessionId: id, mode: "summary-only" },
  "session.rewind": { sessionId: id, historyEntryId: "h1" },
  "session.interruptSubagent": { sessionId: id, subagentId: "a1" },
  "session.ephemeral.create": { sessionId: id, instructions: "briefly", tools: [] },
  "session.ephemeral.submit": { sessionId: id, contextId: "c1", threadId: "t1", message: "hi" },
  "session.ephemeral.close": { sessionId: id, contextId: "c1" },
  "session.clientTool.ack": { sessionId: id, callId: "call-1" },
  "session.clientTool.result": { sessionId: id, callId: "call-1", ok: false, error: "no" },
});

describe("an unknown session", () => {
  it('is "session not found" with data {sessionId} on every method that names one', async () => {
    const params = sessionParams("no-such-session");
    // Every method the host offers, except the three that name no session, is in the table.
    expect(Object.keys(params).sort()).toEqual(client.ready.methods.filter((m) => !["initialize", "session.create", "session.list"].includes(m)).sort());
    for (const [method, p] of Object.entries(params)) {
      expect(await client.fail(method, p), method).toEqual({ code: "not_found", message: "session not found", data: { sessionId: "no-such-session" } });
    }
  });

  it("is also what session.unobserve answers for a session this connection does not observe", async () => {
    const other = await h.connect("other");
    expect(await other.fail("session.unobserve", { sessionId })).toEqual({ code: "not_found", message: "session not found", data: { sessionId } });
  });
});

describe("busy turn requests", () => {
  it('refuse a submit while a turn runs: "a session turn is already running"', async () => {
    const turn = client.send("session.submit", { sessionId, text: "/sleep 5000\nslow" });
    await client.waitFor((m) => m.type === "session.delta" && m.sessionId === sessionId, "the turn's first delta");
    expect(await client.fail("session.submit", { sessionId, text: "another" })).toEqual({ code: "busy", message: "a session turn is already running" });
    expect(await client.fail("session.retry", { sessionId })).toEqual({ code: "busy", message: "a session turn is already running" });
    await client.call("session.interrupt", { sessionId });
    await turn.response;
  });

  it('refuse a submit while a mutation waits for the turn: "a mutating session request is in progress"', async () => {
    // A bash step that ignores SIGTERM keeps the interrupted turn settling, and the mutation waiting.
    const marker = join(h.tempDir(), "started");
    const turn = client.send("session.submit", { sessionId, text: `/bash trap '' TERM; touch ${marker}; sleep 20` });
    for (let i = 0; i < 600 && !existsSync(marker); i++) await pause(25);
    expect(existsSync(marker)).toBe(true);
    const persona = client.send("session.setPersona", { sessionId, personaId: "reviewer" });
    for (const method of ["session.submit", "session.queue", "session.steer"]) {
      expect(await client.fail(method, { sessionId, text: "during the mutation" }), method).toEqual({ code: "busy", message: "a mutating session request is in progress" });
    }
    await persona.response;
    await turn.response;
  });
});

describe("session.exec", () => {
  it("refuses a duplicate active execId: busy \"execution '<execId>' is already active\"", async () => {
    const first = client.send("session.exec", { sessionId, execId: "dup", command: "sleep 20" });
    await client.snapshot(sessionId); // a round trip so the first exec is registered
    expect(await client.fail("session.exec", { sessionId, execId: "dup", command: "true" })).toEqual({ code: "busy", message: "execution 'dup' is already active" });
    await client.call("session.cancelExec", { sessionId, execId: "dup" });
    await first.response;
  });

  it('answers a cancelled exec with cancelled "execution was cancelled" and data {cause}', async () => {
    const byCancelExec = client.send("session.exec", { sessionId, execId: "one", command: "sleep 20" });
    await client.snapshot(sessionId);
    await client.call("session.cancelExec", { sessionId, execId: "one" });
    expect(errorOf(await byCancelExec.response)).toEqual({ code: "cancelled", message: "execution was cancelled", data: { cause: "cancelled by session.cancelExec" } });

    const byInterrupt = client.send("session.exec", { sessionId, execId: "two", command: "sleep 20" });
    await client.snapshot(sessionId);
    await client.call("session.interrupt", { sessionId });
    expect(errorOf(await byInterrupt.response)).toEqual({ code: "cancelled", message: "execution was cancelled", data: { cause: "interrupted by session.interrupt" } });
  });
});

describe("an unknown or closed ephemeral context", () => {
  it("is internal_error \"unknown ephemeral context '<id>'\" with no data", async () => {
    const submit = (contextId: string) => client.fail("session.ephemeral.submit", { sessionId, contextId, threadId: "t1", message: "hi" });
    expect(await submit("no-such-context")).toEqual({ code: "internal_error", message: "unknown ephemeral context 'no-such-context'" });
    const { contextId } = await client.call("session.ephemeral.create", { sessionId, instructions: "briefly", tools: [] });
    expect((await client.call("session.ephemeral.close", { sessionId, contextId })).closed).toBe(true);
    expect(await submit(contextId)).toEqual({ code: "internal_error", message: `unknown ephemeral context '${contextId}'` });
  });
});

describe("an error thrown inside a handler", () => {
  it('is internal_error "session protocol request failed" with the reason in data.cause', async () => {
    expect(await client.fail("session.resolvePrompt", { sessionId, promptId: "no-such-prompt" })).toEqual({
      code: "internal_error",
      message: "session protocol request failed",
      data: { cause: "unknown prompt 'no-such-prompt'" },
    });
    expect(await client.fail("session.setPersona", { sessionId, personaId: "no-such-persona" })).toEqual({
      code: "internal_error",
      message: "session protocol request failed",
      data: { cause: "unknown persona: no-such-persona" },
    });
  });
});
