import { describe, expect, it } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { RemoteAsking } from "../../src/bridge/interactions/remote-asking.js";
import type { PlanApprovalResult, ReverseRequester, UserInputOutcome } from "../../src/bridge/interactions/reverse-requester.js";
import { SharedAnswers } from "../../src/bridge/interactions/shared-answers.js";
import { MemoryInteractionStore } from "../../src/store/memory-interactions.js";
import type { InteractionKindName } from "../../src/store/interactions.js";

/**
 * The core's asking of clients about interactions they were not asked about when they opened:
 * one question per interaction however often it is asked for (a replayed and a live event racing
 * must not withdraw the question and repeat it), withdrawn once the log says it was settled, and
 * each answer  settled in the real in-memory interaction store.
 * The client is a requester that records what it is asked and answers when the test says.
 */

const SESSION = "s-1";
const HOST = "host-1";

interface Asked {
  kind: "permission" | "input" | "plan";
  id: string;
  signal: AbortSignal;
  answer(value: unknown): void;
}

/** A client that is asked through the core's requester shape and answers when told. */
function recordingClient() {
  const asked: Asked[] = [];
  const ask =
    <T>(kind: Asked["kind"]) =>
    (_sessionId: string, params: { interactionId?: string; requestId?: string }, signal: AbortSignal) =>
      new Promise<T | undefined>((resolve) => {
        asked.push({ kind, id: params.interactionId ?? params.requestId ?? "", signal, answer: (v) => resolve(v as T) });
      });
  const requester: ReverseRequester = {
    requestPermission: ask("permission"),
    requestUserInput: ask<UserInputOutcome>("input"),
    requestPlanApproval: ask<PlanApprovalResult>("plan"),
  };
  return { requester, asked };
}

async function rig() {
  const store = new MemoryInteractionStore();
  const decided: Array<{ id: string; decision: unknown }> = [];
  store.consume(HOST, async ({ interaction, decision }) => {
    decided.push({ id: interaction.id, decision });
    return true;
  });
  const open = (id: string, kind: InteractionKindName) =>
    store.open({ id, sessionId: SESSION, kind, hostKey: HOST, openedBy: "r-1", call: { sessionId: SESSION, callId: `call-${id}`, toolName: "t" }, data: "plan", deadlineAt: Date.now() + 60_000 });
  const answers = new SharedAnswers(SESSION, { store, hostKey: HOST, replicaId: "r-1" });
  const client = recordingClient();
  const asking = new RemoteAsking(SESSION, client.requester, answers, () => true);
  return { store, decided, open, asking, ...client };
}

/** Lets the asking's microtasks (it asks once the log has delivered the event) run. */
const settledTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("RemoteAsking", () => {
  it("asks once about an interaction it is asked about twice, and the one question decides", async () => {
    const { open, asking, asked, decided } = await rig();
    await open("act_1", "approval");
    const details = { id: "act_1", toolName: "echo-json", args: { a: 7 } };
    const first = asking.askPermission(details);
    // The same approval again, as a replayed event racing the live one would ask.
    const second = asking.askPermission(details);
    await settledTurn();
    expect(asked.map((a) => a.id)).toEqual(["act_1"]);
    expect(asked[0]!.signal.aborted).toBe(false);
    asked[0]!.answer({ decision: "approve" });
    await Promise.all([first, second]);
    expect(decided).toEqual([{ id: "act_1", decision: { action: "approve", scope: "once", voter: null } }]); // the answer names its voter (none: this requester has no principal)
  });

  it("withdraws a question once the log says it was settled, and may then ask about it again", async () => {
    const { open, asking, asked } = await rig();
    await open("plan_1", "plan");
    const asked1 = asking.askPlan({ id: "plan_1", plan: "- one step" });
    await settledTurn();
    asking.onEvent({ type: "plan.approved", payload: { id: "plan_1", plan: "- one step" } } as unknown as Event);
    expect(asked[0]!.signal.aborted).toBe(true);
    asked[0]!.answer(undefined);
    await asked1;
    void asking.askPlan({ id: "plan_1", plan: "- one step" });
    await settledTurn();
    expect(asked.map((a) => a.id)).toEqual(["plan_1", "plan_1"]);
    expect(asked[1]!.signal.aborted).toBe(false);
  });

  it("settles a question a client declined as declined, with why, and an answer as the response", async () => {
    const { open, asking, asked, decided } = await rig();
    await open("input_1", "user_input");
    await open("input_2", "user_input");
    const declined = asking.askInput({ id: "input_1", prompt: "Which colour?" });
    const answered = asking.askInput({ id: "input_2", prompt: "Which size?" });
    await settledTurn();
    asked[0]!.answer({ declined: "the user declined to answer" });
    asked[1]!.answer({ response: "large" });
    await Promise.all([declined, answered]);
    expect(decided).toEqual([
      { id: "input_1", decision: { action: "decline", reason: "the user declined to answer" } },
      { id: "input_2", decision: { action: "respond", response: "large" } },
    ]);
  });
});
