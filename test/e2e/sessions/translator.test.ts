import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Change, SessionDeltaMessage, Snapshot } from "../../../generated/tau-v18.js";
import { DeltaTranslator, type EventDraft } from "../../../src/bridge/translation/translator.js";
import { applyDelta, DeltaGapError } from "../../../src/tau/delta-applier.js";
import { ProtocolValidators } from "../../../src/validation/validator.js";
import { HostHarness, type TauTestClient } from "../../support/tau-client.js";

/**
 * The delta → event translator against the real embedded host: a raw Tau client observes a
 * session, every `session.delta` is applied to the observed baseline with the real delta applier
 * and fed to the translator, exactly as a hub does, and the events are checked against what the
 * turn did. Every event produced must validate against the Ask registry.
 */

const ask = ProtocolValidators.shared().get("ask");
const WAIT_MS = 10_000;

/** Follows one session on a client: applies its deltas in arrival order and translates them. */
class Recorder {
  readonly events: EventDraft[] = [];
  snapshot: Snapshot;
  translator: DeltaTranslator;
  /** Deltas to leave out (by toRevision), to make gaps. */
  readonly skip = new Set<number>();
  /** Set while the recorder pretends to be disconnected: messages arriving meanwhile are lost. */
  paused = false;
  gaps = 0;
  private processed: number;
  private waiters: Array<() => void> = [];
  private failure: Error | undefined;

  private constructor(
    private readonly client: TauTestClient,
    private readonly sessionId: string,
    observed: { snapshot: Snapshot },
    since: number,
  ) {
    this.snapshot = observed.snapshot;
    this.translator = new DeltaTranslator(observed.snapshot);
    this.processed = since;
    client.onMessage(() => this.sync());
    this.sync();
  }

  /** session.observe on `client`; messages from the observe request on are applied (stale ones are dropped). */
  static async observe(client: TauTestClient, sessionId: string): Promise<Recorder> {
    const since = client.mark();
    const observed = await client.call("session.observe", { sessionId });
    return new Recorder(client, sessionId, observed, since);
  }

  types(): string[] {
    return this.events.map((e) => e.type);
  }

  of<T extends EventDraft["type"]>(type: T): Array<Extract<EventDraft, { type: T }>["payload"]> {
    return this.events.filter((e) => e.type === type).map((e) => e.payload) as never;
  }

  /** Text of all model.streaming events. */
  streamedText(): string {
    return this.of("model.streaming").map((p) => p.delta).join("");
  }

  /** Resolves once `predicate` holds for the events recorded so far. */
  async until(predicate: (events: EventDraft[]) => boolean, what: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!predicate(this.events)) {
      if (this.failure) throw this.failure;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; events: ${this.types().join(", ")}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (this.failure) throw this.failure;
  }

  untilType(type: EventDraft["type"], count = 1): Promise<void> {
    return this.until((events) => events.filter((e) => e.type === type).length >= count, `${count} × ${type}`);
  }

  /** Fetches session.snapshot and lets the translator catch up, as after a reconnect. */
  async resync(): Promise<EventDraft[]> {
    const snapshot: Snapshot = await this.client.call("session.snapshot", { sessionId: this.sessionId });
    this.snapshot = snapshot;
    const drafts = this.translator.resync(snapshot);
    this.record(drafts);
    // Deltas that arrived meanwhile and are newer than the fetched snapshot still apply.
    this.sync();
    return drafts;
  }

  private sync(): void {
    try {
      for (; this.processed < this.client.messages.length; this.processed += 1) {
        const message = this.client.messages[this.processed];
        if (this.paused || message.sessionId !== this.sessionId) continue;
        if (message.type === "session.delta") this.apply(message);
        else if (message.type === "session.pendingUserMessages") this.record(this.translator.pending(message.state));
        else if (message.type === "session.ephemeral") this.record(this.translator.ephemeral(message, this.snapshot));
      }
    } catch (error) {
      this.failure = error as Error;
    }
    for (const wake of this.waiters.splice(0)) wake();
  }

  private apply(message: SessionDeltaMessage): void {
    if (this.skip.has(message.toRevision)) return;
    const before = this.snapshot;
    let outcome;
    try {
      outcome = applyDelta(before, message);
    } catch (error) {
      if (!(error instanceof DeltaGapError)) throw error;
      this.gaps += 1;
      return; // the test resyncs explicitly
    }
    if (outcome.status === "stale") return;
    this.snapshot = outcome.snapshot;
    this.record(this.translator.delta(message, before, outcome.snapshot));
  }

  private record(drafts: EventDraft[]): void {
    for (const draft of drafts) {
      const check = ask.eventPayload(draft.type, draft.payload);
      if (!check.ok) throw new Error(`invalid ${draft.type} payload ${JSON.stringify(draft.payload)}: ${JSON.stringify(check.issues)}`);
      this.events.push(draft);
    }
  }
}

let h: HostHarness;
let client: TauTestClient;
let sessionId: string;
let rec: Recorder;

beforeEach(async () => {
  h = new HostHarness();
  await h.start();
  ({ client, sessionId } = await h.connectWithSession());
  rec = await Recorder.observe(client, sessionId);
});

afterEach(async () => {
  await h.dispose();
});

/** Exactly one terminal event, for that turn, and it is the last turn event recorded for it. */
function expectOneTerminal(turnId: string, type: "turn.completed" | "turn.failed" | "turn.aborted") {
  const terminals = rec.events.filter((e) => ["turn.completed", "turn.failed", "turn.aborted"].includes(e.type));
  expect(terminals.map((e) => [e.type, (e.payload as { turnId?: string }).turnId])).toEqual([[type, turnId]]);
  const started = rec.types().indexOf("turn.started");
  expect(started).toBeGreaterThanOrEqual(0);
  expect(rec.events.indexOf(terminals[0])).toBeGreaterThan(started);
}

describe("DeltaTranslator on the embedded host's deltas", () => {
  it("a plain turn: turn.started, the prompt, streamed text once, turn.completed with response, tokens and cost", async () => {
    const result = await client.call("session.submit", { sessionId, text: "hello world", historyEntryId: "turn-1" });
    expect(result.turn.status).toBe("completed");
    await rec.untilType("turn.completed");

    const types = rec.types();
    expect(types[0]).toBe("turn.started");
    expect(types[1]).toBe("user.message");
    expect(rec.of("user.message")).toEqual([{ messageId: "turn-1", turnId: "turn-1", text: "hello world" }]);
    expect(types[types.length - 1]).toBe("turn.completed");
    expect(new Set(types.slice(2, -1))).toEqual(new Set(["model.streaming"]));
    expect(rec.of("model.streaming").length).toBeGreaterThan(1);
    expect(rec.of("turn.started")).toEqual([{ turnId: "turn-1" }]);
    // The text was streamed in chunks; committing the message added nothing.
    expect(rec.streamedText()).toBe("You said: hello world");
    expectOneTerminal("turn-1", "turn.completed");

    const [completed] = rec.of("turn.completed");
    // Scripted usage: input = words of the user text (2), output = words of the reply (4).
    expect(completed).toMatchObject({ turnId: "turn-1", response: "You said: hello world", inputTokens: 2, outputTokens: 4 });
    expect(completed.cost).toBeCloseTo(6e-6, 12);
  });

  it("thinking is streamed as model.thinking before the reply", async () => {
    await client.call("session.submit", { sessionId, text: "/think let me see\nok", historyEntryId: "t-think" });
    await rec.untilType("turn.completed");
    const thinking = rec.of("model.thinking").map((p) => p.delta).join("");
    expect(thinking).toBe("let me see");
    expect(rec.types().lastIndexOf("model.thinking")).toBeLessThan(rec.types().indexOf("model.streaming"));
    expect(rec.streamedText()).toBe("You said: ok");
    expect(rec.of("turn.completed")[0].response).toBe("You said: ok");
  });

  it("/bash: tool.use with its arguments, then tool.result with the output; tokens summed over the turn's messages", async () => {
    await client.call("session.submit", { sessionId, text: "/bash echo hi", historyEntryId: "t-bash" });
    await rec.untilType("turn.completed");
    const types = rec.types();
    const use = types.indexOf("tool.use");
    const result = types.indexOf("tool.result");
    expect(use).toBeGreaterThan(types.indexOf("turn.started"));
    expect(result).toBeGreaterThan(use);
    expect(types.filter((t) => t === "tool.use")).toHaveLength(1);
    expect(types.filter((t) => t === "tool.result")).toHaveLength(1);

    const [toolUse] = rec.of("tool.use");
    expect(toolUse).toMatchObject({ name: "bash", args: { command: "echo hi" } });
    const [toolResult] = rec.of("tool.result");
    expect(toolResult).toMatchObject({ id: toolUse.id, name: "bash", output: "hi\n", isError: false });
    expect(toolResult.durationMs).toEqual(expect.any(Number));

    const snapshot = await client.snapshot(sessionId);
    const assistants = snapshot.messages.filter((m) => m.message.role === "assistant" && m.state === "committed").map((m) => m.message as any);
    expect(assistants.length).toBeGreaterThan(1);
    const [completed] = rec.of("turn.completed");
    expect(completed.inputTokens).toBe(assistants.reduce((n, m) => n + m.usage.input, 0));
    expect(completed.outputTokens).toBe(assistants.reduce((n, m) => n + m.usage.output, 0));
    expect(completed.cost).toBeCloseTo(assistants.reduce((n, m) => n + m.usage.cost.total, 0), 12);
    // The response is the last assistant message's text (the reply after the tool), streamed once.
    expect(completed.response).toBe("Tool bash returned: hi");
    expect(rec.streamedText()).toBe(completed.response);
  });

  it("a failing command is a tool.result with isError", async () => {
    await client.call("session.submit", { sessionId, text: "/bash echo oops >&2; exit 3", historyEntryId: "t-bash-fail" });
    await rec.untilType("turn.completed");
    const [toolResult] = rec.of("tool.result");
    expect(toolResult.isError).toBe(true);
    expect(String(toolResult.output)).toContain("oops");
  });

  it("/fail: turn.failed with the message, and no turn.completed", async () => {
    const result = await client.call("session.submit", { sessionId, text: "/fail boom", historyEntryId: "t-fail" });
    expect(result.turn).toMatchObject({ status: "failed", errorMessage: "boom" });
    await rec.untilType("turn.failed");
    expectOneTerminal("t-fail", "turn.failed");
    expect(rec.of("turn.failed")).toEqual([{ turnId: "t-fail", error: "boom" }]);
  });

  it("an interrupt during /sleep ends the turn with turn.aborted", async () => {
    const pending = client.send("session.submit", { sessionId, text: "/sleep 5000\nlate", historyEntryId: "t-sleep" });
    await rec.untilType("turn.started");
    await client.call("session.interrupt", { sessionId });
    expect((await pending.response).ok).toBe(true);
    await rec.untilType("turn.aborted");
    expectOneTerminal("t-sleep", "turn.aborted");
    expect(rec.of("turn.aborted")).toEqual([{ turnId: "t-sleep" }]);
  });

  it("notices: severity error becomes an error event, others a notice", async () => {
    await client.call("session.submit", { sessionId, text: "/notice error bad\n/notice warn careful\ndone", historyEntryId: "t-notice" });
    await rec.untilType("turn.completed");
    expect(rec.of("error")).toEqual([{ error: "bad", recoverable: true }]);
    expect(rec.of("notice")).toEqual([{ severity: "warn", title: "careful", kind: "agent.notice" }]);
    expect(rec.types().indexOf("error")).toBeLessThan(rec.types().indexOf("notice"));
  });

  it("a queued message: queue.updated lists it, then an empty list once its turn starts; both turns end once", async () => {
    const first = client.send("session.submit", { sessionId, text: "/sleep 300\nfirst", historyEntryId: "t-first" });
    await rec.untilType("turn.started");
    const queued = client.send("session.queue", { sessionId, text: "second", historyEntryId: "t-second" });
    await rec.until((events) => events.some((e) => e.type === "queue.updated" && (e.payload as any).messages.length === 1), "queue.updated with the message");
    const [listed] = rec.of("queue.updated");
    expect(listed.messages).toEqual([{ id: expect.any(String), mode: "queue", text: "second" }]);
    expect((await first.response).ok).toBe(true);
    expect((await queued.response).ok).toBe(true);
    await rec.untilType("turn.completed", 2);
    expect(rec.of("queue.updated").at(-1)).toEqual({ messages: [] });
    expect(rec.of("turn.started").map((p) => p.turnId)).toEqual(["t-first", "t-second"]);
    expect(rec.of("turn.completed").map((p) => [p.turnId, p.response])).toEqual([
      ["t-first", "You said: first"],
      ["t-second", "You said: second"],
    ]);
  });

  it("turns started by another client of the session are reported too", async () => {
    const other = await h.connect("other");
    await other.initialize();
    await other.call("session.submit", { sessionId, text: "from elsewhere", historyEntryId: "t-other" });
    await rec.untilType("turn.completed");
    expect(rec.of("turn.started")).toEqual([{ turnId: "t-other" }]);
    expect(rec.of("turn.completed")[0].response).toBe("You said: from elsewhere");
  });

  it("compaction: compaction.started/completed and session.reset {cause: compaction}", async () => {
    await client.call("session.submit", { sessionId, text: "something to summarise", historyEntryId: "t-before" });
    await rec.untilType("turn.completed");
    const epoch = rec.snapshot.timeline.epoch;
    await client.call("session.compact", { sessionId, mode: "summary-only" });
    await rec.untilType("compaction.completed");
    await rec.untilType("session.reset");
    const [started] = rec.of("compaction.started");
    expect(started).toEqual({ operationId: expect.any(String), kind: "manual" });
    expect(rec.of("compaction.completed")).toEqual([{ operationId: started.operationId, kind: "manual", status: "succeeded" }]);
    expect(rec.of("session.reset")).toEqual([{ cause: "compaction", epoch: epoch + 1 }]);
    expect(rec.types().indexOf("compaction.started")).toBeLessThan(rec.types().indexOf("compaction.completed"));
    // Nothing of the old turn is reported again.
    expect(rec.of("turn.completed")).toHaveLength(1);

    // The session keeps working in the new epoch.
    await client.call("session.submit", { sessionId, text: "after", historyEntryId: "t-after" });
    await rec.untilType("turn.completed", 2);
    expect(rec.of("turn.completed")[1]).toMatchObject({ turnId: "t-after", response: "You said: after" });
  });

  it("a gap: deltas missed while away are recovered by resync, with the turn's end reported once", async () => {
    const pending = client.send("session.submit", { sessionId, text: "/sleep 200\nwhile away", historyEntryId: "t-away" });
    await rec.untilType("turn.started");
    rec.paused = true;
    expect((await pending.response).ok).toBe(true);
    rec.paused = false;
    // The recorder's next delta would not fit; the translator catches up from a snapshot instead.
    const drafts = await rec.resync();
    expect(drafts[0]).toEqual({ type: "session.reset", payload: { cause: "resync", epoch: rec.snapshot.timeline.epoch } });
    // Totals come from the snapshot: the turn's committed assistant message.
    const reply = rec.snapshot.messages.find((m) => m.message.role === "assistant" && m.state === "committed")!.message as any;
    expect(drafts.slice(1)).toEqual([
      // What the turn said while away is told before its end.
      { type: "model.streaming", payload: { delta: "You said: while away", messageId: expect.any(String), offset: 0 } },
      {
        type: "turn.completed",
        payload: { turnId: "t-away", response: "You said: while away", inputTokens: reply.usage.input, outputTokens: reply.usage.output, cost: reply.usage.cost.total },
      },
    ]);
    expect(reply.usage.output).toBe(4);
    expectOneTerminal("t-away", "turn.completed");

    // A later turn is translated normally on top of the resynchronised snapshot.
    await client.call("session.submit", { sessionId, text: "back", historyEntryId: "t-back" });
    await rec.untilType("turn.completed", 2);
    expect(rec.of("turn.completed").map((p) => p.turnId)).toEqual(["t-away", "t-back"]);
    expect(rec.gaps).toBe(0);
  });

  it("taking over from another process's events: what they left open ends once, turns run meanwhile are reported, older ones not", async () => {
    await client.call("session.submit", { sessionId, text: "before", historyEntryId: "t-before" });
    await rec.untilType("turn.completed");
    const pending = client.send("session.submit", { sessionId, text: "/sleep 200\ncut off", historyEntryId: "t-cut" });
    await rec.untilType("turn.started", 2);
    // The reporting process goes away; while nobody observes, its turn settles and another one runs.
    rec.paused = true;
    expect((await pending.response).ok).toBe(true);
    await client.call("session.submit", { sessionId, text: "meanwhile", historyEntryId: "t-meanwhile" });
    const reported = [{ type: "session.created", payload: { sessionId } }, ...rec.events];

    const snapshot = await client.call("session.snapshot", { sessionId });
    const drafts = DeltaTranslator.resumingAfter(snapshot, reported).resync(snapshot);
    expect(drafts.map((d) => [d.type, (d.payload as { turnId?: string }).turnId])).toEqual([
      ["session.reset", undefined],
      ["turn.completed", "t-cut"],
      ["turn.started", "t-meanwhile"],
      ["user.message", "t-meanwhile"],
      ["model.streaming", undefined],
      ["turn.completed", "t-meanwhile"],
    ]);
    // The turn nobody reported is told whole, from the snapshot.
    expect(drafts[4]!.payload).toEqual({ delta: "You said: meanwhile", messageId: expect.any(String) });
    // Had the reported events been trimmed to nothing about turns, no old turn is reported again.
    const trimmed = DeltaTranslator.resumingAfter(snapshot, [{ type: "model.streaming", payload: { delta: "x" } }]).resync(snapshot);
    expect(trimmed.map((d) => d.type)).toEqual(["session.reset"]);
  });

  it("a skipped delta is detected as a gap; resync tells the turns that started and settled unseen, whole", async () => {
    // Leave out the delta that starts the next turn (revision current+1).
    rec.skip.add(rec.snapshot.revision + 1);
    await client.call("session.submit", { sessionId, text: "unseen", historyEntryId: "t-unseen" });
    await rec.until(() => rec.gaps > 0, "a gap");
    expect(rec.events).toEqual([]);
    const drafts = await rec.resync();
    expect(drafts.map((d) => d.type)).toEqual(["session.reset", "turn.started", "user.message", "model.streaming", "turn.completed"]);
    expect(drafts[2].payload).toEqual({ messageId: "t-unseen", turnId: "t-unseen", text: "unseen" });
    expect(drafts[3].payload).toEqual({ delta: "You said: unseen", messageId: expect.any(String) });
    expect(drafts[4].payload).toMatchObject({ turnId: "t-unseen", response: "You said: unseen" });
  });

  it("resync after losing the middle of a watched turn: what it did unwatched, then its end", async () => {
    const pending = client.send("session.submit", { sessionId, text: "/sleep 200\n/bash echo away\nlater words", historyEntryId: "t-half" });
    await rec.untilType("user.message");
    rec.paused = true;
    expect((await pending.response).ok).toBe(true);
    rec.paused = false;
    const drafts = await rec.resync();
    expect(drafts.map((d) => d.type)).toEqual(["session.reset", "tool.use", "tool.result", "model.streaming", "turn.completed"]);
    expect(drafts[2]!.payload).toMatchObject({ name: "bash", output: "away\n", isError: false });
    expect(drafts[3]!.payload).toEqual({ delta: "You said: later words\nTool bash returned: away", messageId: expect.any(String), offset: 0 });
    expect(rec.of("turn.started")).toEqual([{ turnId: "t-half" }]);
    expectOneTerminal("t-half", "turn.completed");
  });

  it("resync while a turn runs: turn.started and its prompt, then its end once it settles", async () => {
    rec.paused = true;
    const pending = client.send("session.submit", { sessionId, text: "/sleep 300\nlater", historyEntryId: "t-running" });
    await client.waitForTurnRunning(sessionId, "t-running");
    rec.paused = false;
    const drafts = await rec.resync();
    expect(drafts.map((d) => d.type)).toEqual(["session.reset", "turn.started", "user.message"]);
    expect((await pending.response).ok).toBe(true);
    await rec.untilType("turn.completed");
    expect(rec.of("turn.started")).toEqual([{ turnId: "t-running" }]);
    expectOneTerminal("t-running", "turn.completed");
    expect(rec.of("turn.completed")[0].response).toBe("You said: later");
  });
});

describe("DeltaTranslator on hand-made deltas over a real baseline", () => {
  let snapshot: Snapshot;
  let translator: DeltaTranslator;

  beforeEach(() => {
    snapshot = rec.snapshot;
    translator = new DeltaTranslator(snapshot);
  });

  /** Applies one patch with the real applier and returns the events it produces (each validated). */
  function patch(changes: Change[]): EventDraft[] {
    const message: SessionDeltaMessage = {
      version: 18,
      type: "session.delta",
      sessionId,
      fromRevision: snapshot.revision,
      toRevision: snapshot.revision + 1,
      cause: { type: "assistant-message" },
      delta: { type: "snapshot.patch", changes },
    };
    const before = snapshot;
    const outcome = applyDelta(before, message);
    expect(outcome.status).toBe("applied");
    snapshot = outcome.snapshot;
    const drafts = translator.delta(message, before, snapshot);
    for (const d of drafts) expect(ask.eventPayload(d.type, d.payload).issues).toEqual([]);
    return drafts;
  }

  const finished = (text: string, extra: Record<string, unknown> = {}) => ({
    role: "assistant" as const,
    content: [{ type: "text" as const, text }],
    api: "scripted",
    provider: "tau-gateway",
    model: "scripted-1",
    usage: { input: 3, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 5, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.5 } },
    stopReason: "stop" as const,
    timestamp: 1,
    ...extra,
  });
  const draftMessage = (id: string) => ({ id, state: "draft" as const, modelVisible: false, message: { role: "assistant" as const, content: [], timestamp: 1 } });

  it("text committed without streaming is emitted once; committing it again adds nothing", () => {
    expect(patch([{ type: "message.append", message: { id: "m-direct", state: "committed", modelVisible: true, message: finished("Direct answer") } }])).toEqual([
      { type: "model.streaming", payload: { delta: "Direct answer", messageId: "m-direct", offset: 0 } },
    ]);
    expect(patch([{ type: "message.replace", message: { id: "m-direct", state: "committed", modelVisible: true, message: finished("Direct answer") } }])).toEqual([]);
  });

  it("partly streamed text: the commit emits only the missing suffix, both naming their message and where in it they begin", () => {
    expect(patch([{ type: "message.append", message: draftMessage("m-part") }])).toEqual([]);
    expect(patch([{ type: "message.content.append", messageId: "m-part", text: "Hel", timestamp: 2 }])).toEqual([
      { type: "model.streaming", payload: { delta: "Hel", messageId: "m-part", offset: 0 } },
    ]);
    expect(patch([{ type: "message.replace", message: { id: "m-part", state: "committed", modelVisible: true, message: finished("Hello world") } }])).toEqual([
      { type: "model.streaming", payload: { delta: "lo world", messageId: "m-part", offset: 3 } },
    ]);
  });

  it("a fully streamed message emits nothing on commit, and a discarded draft never shows", () => {
    patch([{ type: "message.append", message: draftMessage("m-full") }]);
    patch([{ type: "message.content.append", messageId: "m-full", text: "All of it", timestamp: 2 }]);
    expect(patch([{ type: "message.replace", message: { id: "m-full", state: "committed", modelVisible: true, message: finished("All of it") } }])).toEqual([]);
    patch([{ type: "message.append", message: draftMessage("m-gone") }]);
    expect(
      patch([{ type: "message.replace", message: { id: "m-gone", state: "discarded", modelVisible: false, message: { role: "assistant", content: [{ type: "text", text: "never" }], timestamp: 2 } } }]),
    ).toEqual([]);
  });

  it("a turn seen only when settled still gets turn.started first, its prompt next, and a repeated settle adds nothing", () => {
    const settled = { userHistoryEntryId: "t-late", state: "settled" as const, outcome: { status: "completed" as const, stopReason: "stop" as const } };
    const user = { id: "t-late", state: "committed" as const, modelVisible: true, message: { role: "user" as const, content: "hi", timestamp: 1 } };
    const reply = { id: "m-late", state: "committed" as const, modelVisible: true, message: finished("Late reply") };
    const drafts = patch([{ type: "message.append", message: user }, { type: "message.append", message: reply }, { type: "turn.set", turn: settled }]);
    expect(drafts.map((d) => d.type)).toEqual(["turn.started", "user.message", "model.streaming", "turn.completed"]);
    // The reply was committed before the turn record appeared; the snapshot still attributes it.
    expect(drafts[3].payload).toEqual({ turnId: "t-late", response: "Late reply", inputTokens: 3, outputTokens: 2, cost: 0.5 });
    expect(patch([{ type: "turn.set", turn: settled }])).toEqual([]);
  });

  it("a user message joining a running turn without a turn of its own names that turn, once", () => {
    patch([{ type: "turn.set", turn: { userHistoryEntryId: "t-run", state: "running" } }]);
    const steer = { id: "m-steer", state: "committed" as const, modelVisible: true, message: { role: "user" as const, content: "also this", timestamp: 1 } };
    expect(patch([{ type: "message.append", message: steer }])).toEqual([{ type: "user.message", payload: { messageId: "m-steer", turnId: "t-run", text: "also this" } }]);
    expect(patch([{ type: "message.replace", message: steer }])).toEqual([]);
  });

  it("a started turn missing from a resync snapshot is ended as failed, once", () => {
    patch([{ type: "turn.set", turn: { userHistoryEntryId: "t-gone", state: "running" } }]);
    const { ["t-gone"]: _gone, ...turns } = snapshot.turns;
    const drafts = translator.resync({ ...snapshot, turns });
    expect(drafts).toEqual([
      { type: "session.reset", payload: { cause: "resync", epoch: snapshot.timeline.epoch } },
      { type: "turn.failed", payload: { turnId: "t-gone", error: "the turn is no longer known to the Tau host; its outcome was lost" } },
    ]);
    expect(translator.resync({ ...snapshot, turns }).map((d) => d.type)).toEqual(["session.reset"]);
  });

  it("blocked turns are reported as turn.failed", () => {
    patch([{ type: "turn.set", turn: { userHistoryEntryId: "t-blocked", state: "running" } }]);
    const drafts = patch([
      { type: "turn.set", turn: { userHistoryEntryId: "t-blocked", state: "settled", outcome: { status: "blocked", reason: "auto-compaction-failed", message: "context full" } } },
    ]);
    expect(drafts).toEqual([{ type: "turn.failed", payload: { turnId: "t-blocked", error: "turn blocked (auto-compaction-failed): context full" } }]);
  });

  it("a tool first seen finished gets tool.use before tool.result, with the error as output", () => {
    const call = { id: "m-call", state: "committed" as const, modelVisible: true, message: finished("", { content: [{ type: "toolCall", id: "call-1", name: "bash", arguments: { command: "ls" } }], stopReason: "toolUse" }) };
    patch([{ type: "message.append", message: call }]);
    const tool = { id: "call-1", toolCallId: "call-1", toolName: "bash", facetIds: [], call: { messageId: "m-call", contentIndex: 0 } };
    const drafts = patch([
      { type: "tool.set", tool: { ...tool, status: "failed", startedAt: 10, finishedAt: 25.4, error: "no such file" } },
      { type: "timeline.append", item: { type: "tool", id: "item-tool-1", sequence: snapshot.timeline.sequence + 1, createdAt: 1, toolId: "call-1" } },
    ]);
    expect(drafts).toEqual([
      { type: "tool.use", payload: { id: "call-1", name: "bash", args: { command: "ls" } } },
      { type: "tool.result", payload: { id: "call-1", name: "bash", output: "no such file", isError: true, durationMs: 15 } },
    ]);
  });
});
