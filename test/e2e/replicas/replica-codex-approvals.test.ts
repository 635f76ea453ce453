import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { agentText, CodexTestClient, completedItems } from "../../support/codex-client.js";
import { CALL_MARK, markRuns, markToolsFile } from "../../support/mark-tool.js";
import { leasesOwned, startReplicaSet } from "../../support/replica-set.js";

/**
 * A Codex client on either replica sharing a real redis-server, every part a real process: B, which
 * does not own the Tau host (A does), and A itself. The approval A opens for a command tool of the
 * client's thread reaches the client as item/commandExecution/requestApproval on its own
 * connection, once, and its decision is the one carried out — accept runs the command once,
 * decline runs nothing — and the turn completes. A question of ask_user reaches it as
 * item/tool/requestUserInput the same way. Without the client being asked, the interaction would
 * wait for its deadline (five minutes), far beyond what the turn is given here.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 120_000;
/** Far below the interaction deadline (300 s by default): a turn that completes was decided by an answer. */
const TURN_TIMEOUT = 45_000;
const APPROVAL = "item/commandExecution/requestApproval";
const QUESTION = "item/tool/requestUserInput";

/** A Codex client on replica A (the owner) or B, with `decision` for every approval and "Blue" for every question; runs one turn of `text`. */
async function codexTurnOn(replica: "A" | "B", text: string, decision: "accept" | "decline" = "accept") {
  const { file, marker } = markToolsFile(cleanups);
  const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tools-config", file] });
  const [a, b] = set.replicas as [ServingCli, ServingCli];
  expect([await leasesOwned(a), await leasesOwned(b)]).toEqual([1, 0]);
  const client = await CodexTestClient.websocket((replica === "A" ? a : b).baseUrl.replace("http://", "ws://"));
  cleanups.push(() => client.socket.terminate());
  client.onRequest(APPROVAL, () => ({ decision }));
  client.onRequest(QUESTION, (params) => ({ answers: { [params.questions[0].id]: { answers: ["Blue"] } } }));
  await client.initialize();
  const { thread } = await client.request("thread/start", { approvalPolicy: "on-request" });
  const { turn } = await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text, text_elements: [] }] });
  const completed = await client.turnCompleted(turn.id, TURN_TIMEOUT);
  return { client, threadId: thread.id as string, turnId: turn.id as string, completed, messages: client.turnMessages(turn.id), marker };
}

/** Exactly one approval request, for the command's item; accepted, the command ran once and the turn completed. */
async function expectAskedAndRunOnce(replica: "A" | "B") {
  const { client, threadId, turnId, completed, messages, marker } = await codexTurnOn(replica, CALL_MARK);
  const requests = client.serverRequests(APPROVAL);
  const [item] = completedItems(messages, "commandExecution");
  expect(requests).toHaveLength(1);
  // As Codex orders it: the thread waits on the approval, then the command item starts, then the client is asked.
  const waits = client.received.findIndex((m) => m.method === "thread/status/changed" && m.params.status.activeFlags?.includes("waitingOnApproval"));
  const started = client.received.findIndex((m) => m.method === "item/started" && m.params.item.id === item.id);
  expect([waits < started, started < client.received.indexOf(requests[0]!)]).toEqual([true, true]);
  expect(requests[0]!.params).toMatchObject({ threadId, turnId, itemId: item.id, availableDecisions: ["accept", "acceptForSession", "decline", "cancel"] });
  expect(item).toMatchObject({ status: "completed", exitCode: 0, aggregatedOutput: expect.stringContaining("marked") });
  expect(completed.params.turn.status).toBe("completed");
  expect(client.notifications("serverRequest/resolved").map((m) => m.params.requestId)).toEqual([requests[0]!.id]);
  expect(markRuns(marker)).toBe(1);
  expect(client.invalid).toEqual([]);
}

describe("a Codex client on a replica that does not own the Tau host", () => {
  it(
    "is asked about the approval A's host opened, on its own connection, once; accept runs the command once and the turn completes",
    () => expectAskedAndRunOnce("B"),
    TEST_TIMEOUT,
  );

  it(
    "declines it: the command does not run, the item is declined and the turn completes",
    async () => {
      const { client, completed, messages, marker } = await codexTurnOn("B", CALL_MARK, "decline");
      expect(client.serverRequests(APPROVAL)).toHaveLength(1);
      expect(completedItems(messages, "commandExecution")).toEqual([expect.objectContaining({ status: "declined" })]);
      expect(completed.params.turn.status).toBe("completed");
      expect(markRuns(marker)).toBe(0);
      expect(client.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "is asked ask_user's question once, and its answer is the tool's result",
    async () => {
      const { client, completed, messages } = await codexTurnOn("B", '/tool ask_user {"question":"Pick a colour","options":["Red","Blue"]}');
      const requests = client.serverRequests(QUESTION);
      expect(requests).toHaveLength(1);
      expect(requests[0]!.params.questions[0]).toMatchObject({ question: "Pick a colour", options: [{ label: "Red" }, { label: "Blue" }] });
      expect(completed.params.turn.status).toBe("completed");
      expect(JSON.stringify(messages)).toContain("Blue");
      expect(client.notifications("serverRequest/resolved").map((m) => m.params.requestId)).toEqual([requests[0]!.id]);
      expect(client.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});

describe("a Codex client on the replica that owns the Tau host, with a shared store", () => {
  // The owner's approval event goes to Redis before it is in the owner's own log, and the thread
  // links the approval to its command item only when it sees that event: the client is asked after.
  it(
    "is asked about the approval once; accept runs the command once and the turn completes",
    () => expectAskedAndRunOnce("A"),
    TEST_TIMEOUT,
  );
});

describe("a plan proposed on one replica, a Codex client joining on the other", () => {
  it(
    "is asked about the plan once it resumes the thread; its approval decides, and the first client's question is withdrawn",
    async () => {
      const set = await startReplicaSet(cleanups, { replicas: 2 });
      const [a, b] = set.replicas as [ServingCli, ServingCli];
      const connect = async (replica: ServingCli) => {
        const client = await CodexTestClient.websocket(replica.baseUrl.replace("http://", "ws://"));
        cleanups.push(() => client.socket.terminate());
        await client.initialize();
        return client;
      };
      // The laptop on A starts the turn; its plan question stays open (nobody is at the laptop).
      const laptop = await connect(a);
      laptop.onRequest(QUESTION, () => new Promise(() => undefined));
      const { thread } = await laptop.request("thread/start", {});
      const { turn } = await laptop.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: '/tool submit_plan {"plan":"- one step"}', text_elements: [] }] });
      const laptopAsked = await laptop.waitFor((m) => m.method === QUESTION, TURN_TIMEOUT);

      // The phone resumes the thread on B: asked at once, from the shared store.
      const phone = await connect(b);
      phone.onRequest(QUESTION, (params) => ({ answers: { [params.questions[0].id]: { answers: ["Approve"] } } }));
      const resumed = await phone.request("thread/resume", { threadId: thread.id, excludeTurns: true });
      expect(resumed.thread.status).toEqual({ type: "active", activeFlags: ["waitingOnUserInput"] });
      const completed = await laptop.turnCompleted(turn.id, TURN_TIMEOUT);
      expect(completed.params.turn.status).toBe("completed");
      expect(phone.serverRequests(QUESTION)).toEqual([expect.objectContaining({ params: expect.objectContaining({ threadId: thread.id, turnId: turn.id, itemId: laptopAsked.params.itemId }) })]);
      expect(agentText(laptop.turnMessages(turn.id))).toContain("approved the plan");
      await laptop.waitFor((m) => m.method === "serverRequest/resolved" && m.params.requestId === laptopAsked.id, TURN_TIMEOUT);
      expect(laptop.invalid).toEqual([]);
      expect(phone.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
