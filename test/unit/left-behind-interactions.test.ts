import { describe, expect, it } from "vitest";
import type { SessionClientToolCallMessage } from "../../generated/tau-v18.js";
import { draft, type EventDraft } from "../../src/bridge/event-draft.js";
import { HOLDER_GONE, PendingInteractions, type InteractionKind } from "../../src/bridge/interactions/pending-interactions.js";
import { errorReply, type ToolCall, type ToolReply } from "../../src/bridge/interactions/tool-call.js";
import { MemoryInteractionStore } from "../../src/store/memory-interactions.js";
import type { SharedInteraction } from "../../src/store/interactions.js";

/**
 * The host's new owner and the interactions a replica that is gone left pending in the store
 * (PendingInteractions.endLeftBehind, and a vote delivered for one): each ends once, with its
 * event, and nothing is adopted, decided or sent to Tau for it — on the real memory store. The
 * processes around it (a killed holder, Tau cancelling its call) are in
 * test/e2e/replicas/replica-vote-holder-dies.test.ts.
 */

const HOST = "host-1";
const SESSION = "s1";

const callMessage = (callId: string): SessionClientToolCallMessage =>
  ({ type: "session.clientTool.call", sessionId: SESSION, agentId: "main", callId, toolName: "mark", arguments: {}, ackDeadlineMs: 5000, executionDeadlineMs: 60000 }) as unknown as SessionClientToolCallMessage;

const approvals: InteractionKind<{ tool: string }> = {
  idKind: "approval",
  created: (p) => draft("approval.required", { id: p.id, toolName: p.data.tool }),
  ended: (p, status, reason) => draft("approval.updated", { id: p.id, status, reason }),
  expiredReply: () => errorReply("expired"),
};

function setUp() {
  const store = new MemoryInteractionStore();
  const emitted: Array<{ event: EventDraft; key?: string }> = [];
  const answered: ToolReply[] = [];
  const adopted: string[] = [];
  const decided: unknown[] = [];
  const pending = new PendingInteractions({
    sessionId: SESSION,
    deadlineMs: 60_000,
    emit: (event, key) => void emitted.push({ event, ...(key ? { key } : {}) }),
    logged: () => Promise.resolve(),
    answer: (_call, reply) => void answered.push(reply),
    settled: () => Promise.resolve(true),
    adopt: (shared) => {
      adopted.push(shared.id);
      return { message: shared.call as unknown as SessionClientToolCallMessage, signal: new AbortController().signal, running: false, adopted: true };
    },
    share: { store, hostKey: HOST, replicaId: "replica-b" },
  });
  pending.register(approvals, (_p, decision) => void decided.push(decision));
  /** An approval opened by another replica, still pending in the store. */
  const leftBy = async (id: string, openedBy = "replica-a"): Promise<SharedInteraction> => {
    const shared: SharedInteraction = { id, sessionId: SESSION, kind: "approval", hostKey: HOST, openedBy, call: { ...callMessage(`call-${id}`) }, data: { tool: "mark" }, deadlineAt: Date.now() + 60_000 };
    await store.open(shared);
    return shared;
  };
  const listed = async () => (await store.pending(HOST, SESSION)).map((i) => i.id);
  return { store, pending, emitted, answered, adopted, decided, leftBy, listed };
}

const endedEvent = (id: string) => ({ event: { type: "approval.updated", payload: { id, status: "cancelled", reason: HOLDER_GONE } }, key: `interaction-resolved:${id}` });

describe("interactions a replica that is gone left pending", () => {
  it("end on the new owner, each once with its event, while the ones it holds stay", async () => {
    const t = setUp();
    // Numbered after this replica's own ids (the store refuses a reused id; the memory store does not check).
    await t.leftBy("act_7");
    await t.leftBy("act_8");
    const held = t.pending.open(approvals, { message: callMessage("call-held"), signal: new AbortController().signal, running: false } satisfies ToolCall, { tool: "mark" });
    await held.announced;
    t.emitted.splice(0);

    await t.pending.endLeftBehind();
    expect(t.emitted).toEqual([endedEvent("act_7"), endedEvent("act_8")]);
    expect(await t.listed()).toEqual([held.id]);
    expect(t.pending.isPending(held)).toBe(true);
    // Again (another takeover, a second rebind): nothing more.
    await t.pending.endLeftBehind();
    expect(t.emitted).toHaveLength(2);
    expect([t.answered, t.adopted, t.decided]).toEqual([[], [], []]);
  });

  it("a vote delivered for one ends it instead of being counted; a later vote for it changes nothing; nothing is adopted or sent to Tau", async () => {
    const t = setUp();
    const shared = await t.leftBy("act_1");
    const decision = { action: "approve", scope: "once", voter: { tokenId: "cat" } };

    expect(await t.pending.deliver({ interaction: shared, decision, vote: true })).toBe(true);
    expect(t.emitted).toEqual([endedEvent("act_1")]);
    expect(await t.listed()).toEqual([]);
    expect(await t.pending.deliver({ interaction: shared, decision, vote: true })).toBe(true);
    expect(t.emitted).toHaveLength(1);
    expect([t.answered, t.adopted, t.decided]).toEqual([[], [], []]);
  });

  it("an answer that won (not a vote) is still taken over and carried out, as before", async () => {
    const t = setUp();
    const shared = await t.leftBy("act_1");
    const decision = { action: "approve", scope: "once" };
    await t.store.resolve(HOST, SESSION, "act_1", ["approval"], decision);
    // The memory store delivers an accepted answer inside resolve when a consumer is set; here it is handed over as the next owner's consumer would.
    expect(await t.pending.deliver({ interaction: shared, decision })).toBe(true);
    expect(t.adopted).toEqual(["act_1"]);
    expect(t.decided).toEqual([decision]);
    expect(t.emitted).toEqual([]);
  });
});
