import { describe, expect, it } from "vitest";
import type { CommandToolConfig } from "../../../src/bridge/interactions/index.js";
import type { CodexMessage, CodexTestClient } from "../../support/codex-client.js";
import { codexSuite } from "../../support/codex-suite.js";

/**
 * The order in which a Codex client hears about a command of the gateway's that asks for approval,
 * recorded message by message on a real gateway: as the real `codex app-server` 0.169.0 orders it
 * (shared spec, codex-app-server-v2.md §10.5), the thread waits on the approval before the command
 * item starts; a command that does not ask starts as soon as Tau reports it, and one that fails
 * before any decision still starts and completes. Every notification arrives once, turn/completed last.
 */

/** Prints the JSON arguments it was given, a second after it starts (long enough to tell a started item from a finished one). */
const slowEcho: CommandToolConfig = {
  name: "slow-echo",
  description: "Prints the JSON arguments it was given, after a second.",
  parameters: { type: "object", properties: { a: { type: "number" } }, required: ["a"] },
  command: "sh",
  args: ["-c", "sleep 1; cat"],
};

const suite = codexSuite([slowEcho]);

async function thread(policy: string, decision?: unknown): Promise<{ c: CodexTestClient; threadId: string }> {
  const c = await suite.client();
  const threadId = await suite.startedThread(c, { approvalPolicy: policy });
  if (decision !== undefined) c.onRequest("item/commandExecution/requestApproval", () => ({ decision }));
  return { c, threadId };
}

/** What a message is, for comparing orders: the status with its flags, the item type started or completed; agent text deltas as one line. */
const label = (m: CodexMessage): string => {
  if (m.method === undefined) return "response";
  if (m.method === "thread/status/changed") return `status ${m.params.status.type}${m.params.status.activeFlags ? ` [${m.params.status.activeFlags}]` : ""}`;
  if (m.method === "item/started" || m.method === "item/completed") return `${m.method} ${m.params.item.type}`;
  return m.method;
};

/** Every message of one turn (from its turn/start response to its turn/completed), labelled, consecutive agent text deltas as one. */
async function turnOrder(c: CodexTestClient, threadId: string, text: string): Promise<{ order: string[]; messages: CodexMessage[] }> {
  const from = c.received.length;
  await c.turn(threadId, text);
  // Nothing of the turn may follow its turn/completed: give a late message the time to show.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const messages = c.received.slice(from);
  const order = messages.map(label).filter((l, i, all) => !(l === "item/agentMessage/delta" && all[i - 1] === l));
  return { order, messages };
}

const TURN_START = ["response", "status active []", "turn/started", "item/started userMessage", "item/completed userMessage"];
const TURN_END = ["item/started agentMessage", "item/agentMessage/delta", "item/completed agentMessage", "thread/tokenUsage/updated", "status idle", "turn/completed"];

/** The ids of the command items started, in the order received. */
const commandItemIds = (messages: CodexMessage[]) => messages.filter((m) => m.method === "item/started" && m.params.item.type === "commandExecution").map((m) => m.params.item.id as string);

describe("a command that asks for approval", () => {
  it("accepted: the thread waits on the approval, then the item starts, is asked about, runs and completes, as Codex orders it", async () => {
    const { c, threadId } = await thread("on-request", "accept");
    const { order, messages } = await turnOrder(c, threadId, '/tool slow-echo {"a":1}\nDone');
    expect(order).toEqual([
      ...TURN_START,
      "status active [waitingOnApproval]",
      "item/started commandExecution",
      "item/commandExecution/requestApproval",
      "serverRequest/resolved",
      "status active []",
      "item/commandExecution/outputDelta",
      "item/completed commandExecution",
      ...TURN_END,
    ]);
    const [itemId] = commandItemIds(messages);
    expect(messages.find((m) => m.method === "item/commandExecution/requestApproval")!.params.itemId).toBe(itemId);
    expect(messages.find((m) => m.method === "item/completed" && m.params.item.id === itemId)!.params.item).toMatchObject({ status: "completed", aggregatedOutput: '{"a":1}' });
  });

  it("declined: the item completes declined before the thread stops waiting, and the turn goes on", async () => {
    const { c, threadId } = await thread("on-request", "decline");
    const { order } = await turnOrder(c, threadId, '/tool slow-echo {"a":2}\nDone');
    expect(order).toEqual([
      ...TURN_START,
      "status active [waitingOnApproval]",
      "item/started commandExecution",
      "item/commandExecution/requestApproval",
      "serverRequest/resolved",
      "item/completed commandExecution",
      "status active []",
      ...TURN_END,
    ]);
  });
});

describe("a command that does not ask", () => {
  /** How long before its completion the command item started (the command takes a second). */
  const startedAhead = (messages: CodexMessage[]): number => {
    const at = (method: string) => messages.findIndex((m) => m.method === method && m.params.item.type === "commandExecution");
    const started = at("item/started");
    const completed = at("item/completed");
    expect(started).toBeGreaterThan(0);
    return messages[completed]!.params.completedAtMs - messages[started]!.params.startedAtMs;
  };

  it("under approvalPolicy never starts as soon as Tau reports it, without waiting on anything", async () => {
    const { c, threadId } = await thread("never");
    const { order, messages } = await turnOrder(c, threadId, '/tool slow-echo {"a":3}\nDone');
    expect(order).toEqual([...TURN_START, "item/started commandExecution", "item/commandExecution/outputDelta", "item/completed commandExecution", ...TURN_END]);
    expect(startedAhead(messages)).toBeGreaterThanOrEqual(900);
  });

  it("granted for the session starts as soon as Tau reports it", async () => {
    const { c, threadId } = await thread("on-request", "acceptForSession");
    await c.turn(threadId, '/tool slow-echo {"a":4}');
    const { order, messages } = await turnOrder(c, threadId, '/tool slow-echo {"a":5}\nDone');
    expect(c.serverRequests("item/commandExecution/requestApproval")).toHaveLength(1);
    // The grant still shows as a decision, which the thread reports as a status without flags.
    expect(order).toEqual([...TURN_START, "item/started commandExecution", "status active []", "item/commandExecution/outputDelta", "item/completed commandExecution", ...TURN_END]);
    expect(startedAhead(messages)).toBeGreaterThanOrEqual(900);
  });

  it("refused before any decision (invalid arguments) still starts and completes failed, the thread never waiting", async () => {
    const { c, threadId } = await thread("on-request", "accept");
    const { order, messages } = await turnOrder(c, threadId, '/tool slow-echo {"b":1}\nDone');
    expect(order).toEqual([...TURN_START, "item/started commandExecution", "item/commandExecution/outputDelta", "item/completed commandExecution", ...TURN_END]);
    expect(messages.find((m) => m.method === "item/completed" && m.params.item.type === "commandExecution")!.params.item).toMatchObject({ status: "failed" });
    expect(c.serverRequests()).toEqual([]);
  });
});
