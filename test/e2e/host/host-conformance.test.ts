import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionDeltaMessage, Snapshot } from "../../../generated/tau-v18.js";
import { applyDelta, checkSnapshotInvariants } from "../../../src/tau/delta-applier.js";
import { HostHarness, resultOf, type TauTestClient } from "../../support/tau-client.js";

/**
 * The conformance loop: an observer installs the `session.observe` baseline and applies every
 * `session.delta` it receives with the delta applier; after every step of a scripted conversation
 * the snapshot it built must deep-equal the host's own `session.snapshot`.
 */

const lookup = { name: "lookup", description: "Looks a word up.", parameters: { type: "object" } };

let h: HostHarness;
let client: TauTestClient;
let sessionId: string;
let installed: Snapshot;
let applied = 0; // index into client.messages up to which deltas were considered
let appliedCount = 0;
const toolErrors: string[] = [];

beforeAll(async () => {
  h = new HostHarness();
  await h.start();
  ({ client, sessionId } = await h.connectWithSession({ tools: [lookup] }));
  // Answer every client-tool call at once: ack, then a text result.
  client.onMessage((m) => {
    if (m.type !== "session.clientTool.call") return;
    void (async () => {
      await client.call("session.clientTool.ack", { sessionId: m.sessionId, callId: m.callId });
      await client.call("session.clientTool.result", { sessionId: m.sessionId, callId: m.callId, ok: true, content: [{ type: "text", text: `looked up ${JSON.stringify(m.arguments)}` }] });
    })().catch((error) => toolErrors.push(String(error)));
  });
  const observed = await client.send("session.observe", { sessionId });
  const response = resultOf(await observed.response);
  installed = response.snapshot;
  applied = client.responseIndex(observed.id) + 1;
});

afterAll(async () => {
  await h.dispose();
  expect(toolErrors).toEqual([]);
});

/** Applies every delta received since the last call, in arrival order. */
function applyReceived(): void {
  const messages = client.messages.slice(applied);
  applied += messages.length;
  for (const m of messages) {
    if (m.type !== "session.delta" || m.sessionId !== sessionId) continue;
    const outcome = applyDelta(installed, m as SessionDeltaMessage);
    if (outcome.status === "applied") appliedCount++;
    installed = outcome.snapshot;
  }
}

/** Waits until the deltas reach the host's current revision and compares the snapshots. */
async function expectConformance(step: string): Promise<Snapshot> {
  const snapshot = await client.snapshot(sessionId);
  // The host's own snapshot keeps the reference/order invariants JSON Schema cannot express.
  checkSnapshotInvariants(snapshot);
  if (installed.revision < snapshot.revision) {
    await client.waitFor(
      (m) => m.type === "session.delta" && m.sessionId === sessionId && m.toRevision >= snapshot.revision,
      `${step}: delta reaching revision ${snapshot.revision}`,
      { since: applied },
    );
  }
  applyReceived();
  expect(installed.revision, step).toBe(snapshot.revision);
  expect(installed, step).toEqual(snapshot);
  return snapshot;
}

const submit = async (text: string, historyEntryId?: string) =>
  client.call("session.submit", { sessionId, text, ...(historyEntryId ? { historyEntryId } : {}) });

describe("deltas rebuild session.snapshot exactly", () => {
  it("after a plain text turn", async () => {
    expect((await submit("hello there", "c-1")).turn.status).toBe("completed");
    await expectConformance("plain text");
  });

  it("after a thinking turn", async () => {
    await submit("/think weighing options\nthought through");
    await expectConformance("thinking");
  });

  it("after a bash turn", async () => {
    await submit("/bash echo conformance && ls /");
    const snapshot = await expectConformance("bash");
    expect(Object.values(snapshot.tools).some((t: any) => t.toolName === "bash" && t.status === "succeeded")).toBe(true);
  });

  it("after a client tool turn", async () => {
    await submit('/tool lookup {"q":"word"}');
    const snapshot = await expectConformance("client tool");
    expect(Object.values(snapshot.tools).some((t: any) => t.toolName === "lookup" && t.status === "succeeded")).toBe(true);
  });

  it("after a failed turn and a notice", async () => {
    expect((await submit("/fail boom")).turn.status).toBe("failed");
    await submit("/notice error something broke\n/length");
    await expectConformance("failure and notice");
  });

  it("after queued and steered input", async () => {
    const since = client.mark();
    const running = client.send("session.submit", { sessionId, text: "/sleep 800\nslow one" });
    await client.waitForTurnRunning(sessionId, undefined, since);
    const steer = client.send("session.steer", { sessionId, text: "steer in" });
    const queued = client.send("session.queue", { sessionId, text: "queued after" });
    for (const r of [running, steer, queued]) resultOf(await r.response);
    await expectConformance("queue and steer");
  });

  it("after an interrupted turn", async () => {
    const since = client.mark();
    const running = client.send("session.submit", { sessionId, text: "/sleep 5000\nnever finished", historyEntryId: "c-int" });
    await client.waitForTurnRunning(sessionId, "c-int", since);
    await client.call("session.interrupt", { sessionId });
    expect(resultOf(await running.response).turn.status).toBe("aborted");
    await expectConformance("interrupt");
  });

  it("after settings changes and a record", async () => {
    await client.call("session.setReasoning", { sessionId, reasoning: "minimal" });
    await client.call("session.setAutoCompactThreshold", { sessionId, thresholdTokens: 100000 });
    await client.call("session.record", { sessionId, text: "recorded note" });
    await expectConformance("settings and record");
  });

  it("after compaction", async () => {
    const before = installed.timeline.epoch;
    await client.call("session.compact", { sessionId, mode: "summary-only" });
    const snapshot = await expectConformance("compaction");
    expect(snapshot.timeline.epoch).toBe(before + 1);
    await submit("after compaction", "c-after");
    await expectConformance("turn after compaction");
  });

  it("after a rewind", async () => {
    await submit("to be removed", "c-remove");
    await submit("also removed");
    await expectConformance("before rewind");
    const result = await client.call("session.rewind", { sessionId, historyEntryId: "c-remove" });
    expect(result.text).toBe("to be removed");
    await expectConformance("rewind");
    await submit("after rewind");
    await expectConformance("turn after rewind");
  });

  it("after a retry", async () => {
    await client.call("session.retry", { sessionId });
    await expectConformance("retry");
    expect(appliedCount).toBeGreaterThan(20);
  });
});
