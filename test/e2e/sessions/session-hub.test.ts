import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import type { SessionDeltaMessage, Snapshot } from "../../../generated/tau-v18.js";
import { SessionHub } from "../../../src/bridge/session-hub.js";
import { startTauHost, type RunningTauHost } from "../../../src/host/index.js";
import { TauUpstream, type UpstreamServerMessage } from "../../../src/tau/upstream.js";
import { ProtocolValidators } from "../../../src/validation/validator.js";
import { HostHarness, type TauTestClient } from "../../support/tau-client.js";

/**
 * The session hub on a real bridge connection (TauUpstream) to the embedded host: a separate raw
 * Tau client drives the session, the hub observes it and keeps its event log. Messages reach the
 * hub through a gate the test controls, to simulate lost deltas and disconnects.
 */

const ask = ProtocolValidators.shared().get("ask");
const WAIT_MS = 10_000;

let h: HostHarness;
let driver: TauTestClient;
let sessionId: string;
let upstream: TauUpstream;
let hub: SessionHub;
let logLines: string[];
/** Decides whether an upstream message reaches the hub. */
let gate: (message: UpstreamServerMessage) => boolean;

beforeEach(async () => {
  h = new HostHarness();
  await h.start();
  ({ client: driver, sessionId } = await h.connectWithSession({ name: "driver" }));
  logLines = [];
  upstream = new TauUpstream({ url: h.host.url, client: { name: "hub-tests", version: "1" }, reconnect: false });
  await upstream.start();
  hub = new SessionHub({ sessionId, upstream, log: (level, message) => logLines.push(`${level}: ${message}`) });
  gate = () => true;
  upstream.onMessage((message) => {
    if (gate(message)) hub.handle(message);
  });
});

afterEach(async () => {
  await upstream.close();
  await h.dispose();
});

const events = (): Event[] => hub.log.read(0).events;
const types = () => events().map((e) => e.type);
const ofType = <T extends Event["type"]>(type: T) => events().filter((e) => e.type === type) as Array<Extract<Event, { type: T }>>;

/** Resolves once `predicate` holds for the hub's log (checked on every append). */
function until(predicate: (events: Event[]) => boolean, what: string): Promise<void> {
  if (predicate(events())) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out waiting for ${what}; events: ${types().join(", ")}; log: ${logLines.join(" | ")}`));
    }, WAIT_MS);
    const stop = hub.log.subscribe(() => {
      if (!predicate(events())) return;
      clearTimeout(timer);
      stop();
      resolve();
    });
  });
}
const untilType = (type: Event["type"], count = 1) => until((all) => all.filter((e) => e.type === type).length >= count, `${count} × ${type}`);

/** Every event validates against the Ask registry, seqs run 1, 2, 3, … and each turn ends exactly once. */
function expectWellFormedLog() {
  const all = events();
  all.forEach((e, i) => {
    expect(e.seq).toBe(i + 1);
    expect(ask.eventPayload(e.type, e.payload).issues).toEqual([]);
  });
  const terminals = all.filter((e) => ["turn.completed", "turn.failed", "turn.aborted"].includes(e.type)).map((e) => (e.payload as { turnId: string }).turnId);
  expect(new Set(terminals).size).toBe(terminals.length);
  for (const turnId of terminals) {
    const started = all.findIndex((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === turnId);
    const ended = all.findIndex((e) => e.type.startsWith("turn.") && e.type !== "turn.started" && (e.payload as { turnId: string }).turnId === turnId);
    expect(started, `turn ${turnId} started before it ended`).toBeGreaterThanOrEqual(0);
    expect(started).toBeLessThan(ended);
  }
}

async function expectSnapshotCurrent() {
  const truth: Snapshot = await driver.snapshot(sessionId);
  expect(hub.snapshot).toEqual(truth);
}

describe("SessionHub", () => {
  it("attach observes the session and emits session.created as seq 1", async () => {
    await hub.attach();
    expect(events()).toEqual([{ type: "session.created", seq: 1, payload: { sessionId } }]);
    expect(hub.sessionId).toBe(sessionId);
    expect(hub.running).toBe(false);
    expect(hub.activeTurnId).toBeUndefined();
    expect(hub.createdAt).toBe(new Date(hub.snapshot!.createdAt).toISOString());
    await expectSnapshotCurrent();
  });

  it("logs a turn driven by another client in order, with its state visible while it runs", async () => {
    await hub.attach();
    const pending = driver.send("session.submit", { sessionId, text: "/sleep 200\n/bash echo hi\nhello", historyEntryId: "turn-1" });
    await untilType("turn.started");
    expect(hub.running).toBe(true);
    expect(hub.activeTurnId).toBe("turn-1");
    expect((await pending.response).ok).toBe(true);
    await untilType("turn.completed");

    expect(types()[0]).toBe("session.created");
    expect(types()[1]).toBe("turn.started");
    expect(types().at(-1)).toBe("turn.completed");
    expect(types().indexOf("tool.use")).toBeLessThan(types().indexOf("tool.result"));
    expect(ofType("tool.result")[0].payload).toMatchObject({ name: "bash", output: "hi\n", isError: false });
    expect(ofType("turn.completed")[0].payload).toMatchObject({ turnId: "turn-1", response: "You said: hello\nTool bash returned: hi" });
    expect(ofType("model.streaming").map((e) => e.payload.delta).join("")).toBe("You said: hello\nTool bash returned: hi");
    expect(hub.running).toBe(false);
    expect(hub.activeTurnId).toBeUndefined();
    expectWellFormedLog();
    await expectSnapshotCurrent();
  });

  it("tells a turn already running at attach: turn.started and its prompt right after session.created", async () => {
    const pending = driver.send("session.submit", { sessionId, text: "/sleep 300\nongoing", historyEntryId: "turn-early" });
    await driver.waitForTurnRunning(sessionId, "turn-early");
    await hub.attach();
    expect(types()).toEqual(["session.created", "turn.started", "user.message"]);
    expect(ofType("user.message")[0]!.payload).toEqual({ messageId: "turn-early", turnId: "turn-early", text: "/sleep 300\nongoing" });
    expect(hub.activeTurnId).toBe("turn-early");
    expect((await pending.response).ok).toBe(true);
    await untilType("turn.completed");
    expect(ofType("turn.completed")[0].payload.response).toBe("You said: ongoing");
    expectWellFormedLog();
  });

  it("a delta with a wrong fromRevision makes the hub fetch session.snapshot; nothing was lost, so no reset", async () => {
    await hub.attach();
    const installed = hub.snapshot!;
    const bogus: SessionDeltaMessage = {
      version: 18,
      type: "session.delta",
      sessionId,
      fromRevision: installed.revision + 5,
      toRevision: installed.revision + 6,
      cause: { type: "maintenance" },
      delta: { type: "snapshot.patch", changes: [{ type: "cost.set", costTotal: 123 }] },
    };
    hub.handle(bogus);
    // Messages that arrive while the snapshot is fetched wait for it; the turn is logged normally.
    await driver.call("session.submit", { sessionId, text: "after the gap", historyEntryId: "turn-2" });
    await untilType("turn.completed");
    expect(logLines.some((l) => l.includes("fetching session.snapshot"))).toBe(true);
    expect(types()).not.toContain("session.reset");
    expect(hub.snapshot!.costTotal).not.toBe(123);
    expect(ofType("turn.completed")[0].payload).toMatchObject({ turnId: "turn-2", response: "You said: after the gap" });
    expectWellFormedLog();
    await expectSnapshotCurrent();
  });

  it("a lost delta is a gap: the hub resyncs from session.snapshot, says so, and the turn still ends once", async () => {
    await hub.attach();
    const lost = hub.snapshot!.revision + 1;
    gate = (m) => !(m.type === "session.delta" && m.toRevision === lost);
    await driver.call("session.submit", { sessionId, text: "/sleep 100\nthrough a gap", historyEntryId: "turn-gap" });
    await untilType("turn.completed");
    expect(ofType("session.reset").map((e) => e.payload.cause)).toEqual(["resync"]);
    expect(ofType("turn.started").map((e) => e.payload.turnId)).toEqual(["turn-gap"]);
    expect(ofType("turn.completed")[0].payload).toMatchObject({ turnId: "turn-gap", response: "You said: through a gap" });
    expectWellFormedLog();
    await expectSnapshotCurrent();
  });

  it("resync after being cut off: session.reset, then the turns that ran meanwhile, told whole", async () => {
    await hub.attach();
    gate = () => false;
    await driver.call("session.submit", { sessionId, text: "while cut off", historyEntryId: "turn-away" });
    gate = () => true;
    await hub.resync();
    expect(types()).toEqual(["session.created", "session.reset", "turn.started", "user.message", "model.streaming", "turn.completed"]);
    expect(ofType("model.streaming")[0].payload).toEqual({ delta: "You said: while cut off", messageId: expect.any(String) });
    expect(ofType("session.reset")[0].payload).toEqual({ cause: "resync", epoch: hub.snapshot!.timeline.epoch });
    expect(ofType("turn.completed")[0].payload).toMatchObject({ turnId: "turn-away", response: "You said: while cut off" });
    await expectSnapshotCurrent();

    // Nothing changed since: a second resync adds nothing.
    await hub.resync();
    expect(types()).toHaveLength(6);
    expectWellFormedLog();
  });

  it("queue.updated for pending messages, newer revisions only", async () => {
    await hub.attach();
    const first = driver.send("session.submit", { sessionId, text: "/sleep 300\nfirst", historyEntryId: "turn-a" });
    await untilType("turn.started");
    const queued = driver.send("session.queue", { sessionId, text: "second", historyEntryId: "turn-b" });
    await until((all) => all.some((e) => e.type === "queue.updated" && e.payload.messages.length === 1), "the queued message");
    await Promise.all([first.response, queued.response]);
    await untilType("turn.completed", 2);
    const queues = ofType("queue.updated").map((e) => e.payload.messages.map((m) => m.text));
    expect(queues).toEqual([["second"], []]);
    // A stale pending list (an older revision) is ignored.
    hub.handle({ version: 18, type: "session.pendingUserMessages", sessionId, state: { revision: 1, messages: [{ id: "old", mode: "queue", text: "stale" }] } });
    expect(ofType("queue.updated")).toHaveLength(2);
    expectWellFormedLog();
  });

  it("emit appends gateway events after the translated ones; messages for other sessions are ignored", async () => {
    await hub.attach();
    const event = hub.emit({ type: "approval.required", payload: { id: "act_1", toolName: "deploy" } });
    expect(event).toEqual({ type: "approval.required", seq: 2, payload: { id: "act_1", toolName: "deploy" } });
    hub.handle({ version: 18, type: "session.pendingUserMessages", sessionId: "someone-else", state: { revision: 99, messages: [{ id: "x", mode: "queue", text: "x" }] } });
    expect(hub.log.newestSeq).toBe(2);
  });

  it("detach unobserves; the log stays readable and later messages are ignored", async () => {
    await hub.attach();
    await hub.detach();
    await driver.call("session.submit", { sessionId, text: "unobserved", historyEntryId: "turn-x" });
    hub.handle({ version: 18, type: "session.pendingUserMessages", sessionId, state: { revision: 50, messages: [{ id: "x", mode: "queue", text: "x" }] } });
    expect(types()).toEqual(["session.created"]);
    // Attaching again catches up like a resync.
    await hub.attach();
    expect(types()).toEqual(["session.created", "session.reset", "turn.started", "user.message", "model.streaming", "turn.completed"]);
    expectWellFormedLog();
  });

  it("attach fails with the upstream's error for an unknown session", async () => {
    const lost = new SessionHub({ sessionId: "no-such-session", upstream });
    await expect(lost.attach()).rejects.toMatchObject({ code: "not_found" });
    expect(lost.log.newestSeq).toBe(0);
    expect(lost.snapshot).toBeUndefined();
  });
});

describe("SessionHub: streamed chunks that arrive together", () => {
  /**
   * Runs a turn while the gate holds the session's messages back; resolves with them once the
   * delta that settles the turn is among them (the real deltas, in the order the host sent them).
   */
  async function heldTurn(text: string, historyEntryId: string): Promise<UpstreamServerMessage[]> {
    const held: UpstreamServerMessage[] = [];
    let settled!: () => void;
    const done = new Promise<void>((resolve) => (settled = resolve));
    gate = (m) => {
      if (m.sessionId !== sessionId) return true;
      held.push(m);
      const changes = m.type === "session.delta" && m.delta.type === "snapshot.patch" ? m.delta.changes : [];
      if (changes.some((c) => c.type === "turn.set" && c.turn.state === "settled")) settled();
      return false;
    };
    expect((await driver.send("session.submit", { sessionId, text, historyEntryId }).response).ok).toBe(true);
    await done;
    gate = () => true;
    return held;
  }

  /** Streamed `text` (or `thinking`) pieces among held deltas. */
  const pieces = (held: UpstreamServerMessage[], kind: "text" | "thinking"): string[] =>
    held.flatMap((m) => (m.type === "session.delta" && m.delta.type === "snapshot.patch" ? m.delta.changes : [])).flatMap((c) => (c.type === "message.content.append" && c[kind] ? [c[kind]!] : []));

  const endOfTick = () => new Promise<void>((resolve) => setImmediate(resolve));
  const joined = (type: "model.streaming" | "model.thinking") => ofType(type).map((e) => e.payload.delta).join("");
  const reply = "a reply long enough to stream in many small pieces, one after another";

  it("deltas handled in one tick: their chunks become one event, with the same text", async () => {
    await hub.attach();
    const held = await heldTurn(reply, "turn-burst");
    expect(pieces(held, "text").length).toBeGreaterThan(5);
    for (const message of held) hub.handle(message);
    await endOfTick();
    expect(types()).toEqual(["session.created", "turn.started", "user.message", "model.streaming", "turn.completed"]);
    expect(joined("model.streaming")).toBe(pieces(held, "text").join(""));
    expect(joined("model.streaming")).toBe(`You said: ${reply}`);
    expect(ofType("turn.completed")[0]!.payload.response).toBe(`You said: ${reply}`);
    expectWellFormedLog();
    await expectSnapshotCurrent();
  });

  it("deltas handled in separate ticks: one event per chunk, nothing merged", async () => {
    await hub.attach();
    const held = await heldTurn(reply, "turn-trickle");
    for (const message of held) {
      hub.handle(message);
      await endOfTick();
    }
    expect(ofType("model.streaming").map((e) => e.payload.delta)).toEqual(pieces(held, "text"));
    expectWellFormedLog();
  });

  it("thinking and text in one tick: one event of each kind, in the order streamed, each with its text", async () => {
    await hub.attach();
    const held = await heldTurn("/think weighing several options before answering\nok then", "turn-think");
    expect(pieces(held, "thinking").length).toBeGreaterThan(1);
    for (const message of held) hub.handle(message);
    await endOfTick();
    expect(types()).toEqual(["session.created", "turn.started", "user.message", "model.thinking", "model.streaming", "turn.completed"]);
    expect(joined("model.thinking")).toBe("weighing several options before answering");
    expect(joined("model.streaming")).toBe("You said: ok then");
    expectWellFormedLog();
  });

  it("an event emitted while a chunk waits comes after it", async () => {
    await hub.attach();
    const held = await heldTurn(reply, "turn-emit");
    const appends = held.map((m) => m.type === "session.delta" && m.delta.type === "snapshot.patch" && m.delta.changes.some((c) => c.type === "message.content.append"));
    const lastAppend = appends.lastIndexOf(true);
    for (const message of held.slice(0, lastAppend + 1)) hub.handle(message);
    hub.emit({ type: "approval.required", payload: { id: "act_1", toolName: "deploy" } });
    for (const message of held.slice(lastAppend + 1)) hub.handle(message);
    await endOfTick();
    expect(types()).toEqual(["session.created", "turn.started", "user.message", "model.streaming", "approval.required", "turn.completed"]);
    expect(joined("model.streaming")).toBe(`You said: ${reply}`);
  });
});

describe("SessionHub across an upstream restart", () => {
  it("a host restart mid-turn: after the reconnect, resync delivers the turn's end", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "hub-restart-"));
    let host: RunningTauHost | undefined = await startTauHost({ port: 0, stateDir });
    const port = host.port;
    const bridge = new TauUpstream({ url: host.url, client: { name: "hub-restart", version: "1" } });
    try {
      await bridge.start();
      const created = await bridge.request("session.create", { executionEnvironment: { kind: "local", cwd: stateDir }, attributes: {} });
      const restartHub = new SessionHub({ sessionId: created.sessionId, upstream: bridge });
      bridge.onMessage((m) => restartHub.handle(m));
      const resynced = new Promise<void>((resolve) => {
        bridge.onConnected(({ reconnected }) => {
          if (reconnected) void restartHub.resync().then(resolve);
        });
      });
      await restartHub.attach();
      const turn = bridge.request("session.submit", { sessionId: created.sessionId, text: "/sleep 5000\nnever", historyEntryId: "turn-cut" });
      turn.catch(() => undefined); // rejected when the connection drops
      const started = new Promise<void>((resolve) => {
        const stop = restartHub.log.subscribe((e) => {
          if (e.type === "turn.started") {
            stop();
            resolve();
          }
        });
      });
      await started;

      await host.close();
      host = undefined;
      await expect(turn).rejects.toThrow();
      host = await startTauHost({ port, stateDir });
      await resynced;

      const log = restartHub.log.read(0).events;
      expect(log.map((e) => e.type)).toEqual(["session.created", "turn.started", "user.message", "session.reset", "turn.aborted"]);
      expect(log.at(-1)!.payload).toEqual({ turnId: "turn-cut" });
      for (const e of log) expect(ask.eventPayload(e.type, e.payload).issues).toEqual([]);
      expect(restartHub.running).toBe(false);
    } finally {
      await bridge.close();
      await host?.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
