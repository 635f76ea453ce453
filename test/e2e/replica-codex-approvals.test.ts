import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../support/cleanups.js";
import type { ServingCli } from "../support/cli.js";
import { CodexTestClient, completedItems } from "../support/codex-client.js";
import { CALL_MARK, markRuns, markToolsFile } from "../support/mark-tool.js";
import { leasesOwned, startReplicaSet } from "../support/replica-set.js";

/**
 * A Codex client on replica B, which does not own the Tau host (A does), every part a real process
 * on a real redis-server: the approval A opens for a command tool of B's thread reaches the client
 * as item/commandExecution/requestApproval on its own connection, once, and its decision is the
 * one carried out — accept runs the command once, decline runs nothing — and the turn completes.
 * Without B asking its Codex clients the approval would wait for the interaction deadline (five
 * minutes), far beyond what the turn is given here.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 120_000;
/** Far below the interaction deadline (300 s by default): a turn that completes was decided by an answer. */
const TURN_TIMEOUT = 45_000;
const APPROVAL = "item/commandExecution/requestApproval";

async function codexOnNonOwner(decision: "accept" | "decline") {
  const { file, marker } = markToolsFile(cleanups);
  const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tools-config", file] });
  const [a, b] = set.replicas as [ServingCli, ServingCli];
  expect([await leasesOwned(a), await leasesOwned(b)]).toEqual([1, 0]);
  const client = await CodexTestClient.websocket(b.baseUrl.replace("http://", "ws://"));
  cleanups.push(() => client.socket.terminate());
  client.onRequest(APPROVAL, () => ({ decision }));
  await client.initialize();
  const { thread } = await client.request("thread/start", { approvalPolicy: "on-request" });
  const { turn } = await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: CALL_MARK, text_elements: [] }] });
  const completed = await client.turnCompleted(turn.id, TURN_TIMEOUT);
  return { client, threadId: thread.id as string, turnId: turn.id as string, completed, messages: client.turnMessages(turn.id), marker };
}

describe("a Codex client on a replica that does not own the Tau host", () => {
  it(
    "is asked about the approval A's host opened, on its own connection, once; accept runs the command once and the turn completes",
    async () => {
      const { client, threadId, turnId, completed, messages, marker } = await codexOnNonOwner("accept");
      const requests = client.serverRequests(APPROVAL);
      const [item] = completedItems(messages, "commandExecution");
      expect(requests).toHaveLength(1);
      expect(requests[0]!.params).toMatchObject({ threadId, turnId, itemId: item.id, availableDecisions: ["accept", "acceptForSession", "decline", "cancel"] });
      expect(item).toMatchObject({ status: "completed", exitCode: 0, aggregatedOutput: expect.stringContaining("marked") });
      expect(completed.params.turn.status).toBe("completed");
      expect(client.notifications("serverRequest/resolved").map((m) => m.params.requestId)).toEqual([requests[0]!.id]);
      expect(markRuns(marker)).toBe(1);
      expect(client.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "declines it: the command does not run, the item is declined and the turn completes",
    async () => {
      const { client, completed, messages, marker } = await codexOnNonOwner("decline");
      expect(client.serverRequests(APPROVAL)).toHaveLength(1);
      expect(completedItems(messages, "commandExecution")).toEqual([expect.objectContaining({ status: "declined" })]);
      expect(completed.params.turn.status).toBe("completed");
      expect(markRuns(marker)).toBe(0);
      expect(client.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
