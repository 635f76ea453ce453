import { describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import type { Snapshot } from "../../../generated/tau-v18.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { RpcError } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { CALL_MARK, markRuns, markToolsFile } from "../../support/mark-tool.js";
import { answerStream, leasesOwned, startReplicaSet, until, type ReplicaSet } from "../../support/replica-set.js";

/**
 * An approval created through replica A (the owner of the Tau host) and answered on replicas B
 * and C, every part a real process on a real redis-server: exactly one answer is accepted, Tau gets
 * the result once and the command runs once — also when A dies right after the answer was accepted.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 240_000;
const REFUSED_LOG = "Tau did not accept the tool result";

type Client = Awaited<ReturnType<ReplicaSet["client"]>>;

/** Three replicas, A first and holding the host's lease, every one offering the `mark` tool; a client subscribed to one session on each. */
async function threeReplicas() {
  const { file, marker } = markToolsFile(cleanups);
  const set = await startReplicaSet(cleanups, { replicas: 3, serveArgs: ["--tools-config", file] });
  const [a, b, c] = set.replicas as [ServingCli, ServingCli, ServingCli];
  expect([await leasesOwned(a), await leasesOwned(b), await leasesOwned(c)]).toEqual([1, 0, 0]);
  const [onA, onB, onC] = await Promise.all([a, b, c].map((replica) => set.client(replica)));
  for (const client of [onA!, onB!, onC!]) await client.request("initialize", { client: { name: "approvals", version: "1" } });
  const { session } = await onA!.request("session/create", {});
  const sessionId = session.sessionId as string;
  for (const client of [onA!, onB!, onC!]) await client.request("session/subscribe", { sessionId });
  return { set, a, b, c, onA: onA!, onB: onB!, onC: onC!, sessionId, marker };
}

/** Sends the turn through `from` and waits until every client has seen its approval. */
async function approvalRequired(from: Client, clients: Client[], sessionId: string, id: string) {
  const { turnId } = await from.request("session/send", { sessionId, content: CALL_MARK });
  for (const client of clients) {
    await client.waitFor(() => payloadsOf<{ id: string }>(client.eventsOf(sessionId), "approval.required").some((p) => p.id === id), `approval ${id} on every replica`, 60_000);
  }
  return turnId as string;
}

/** Tau's own record of the session: the results it took for calls of `mark`. */
async function tauToolResults(hostUrl: string, sessionId: string) {
  const tau = new TauUpstream({ url: hostUrl, client: { name: "proof-reader", version: "1" }, reconnect: false });
  await tau.start();
  try {
    const snapshot: Snapshot = await tau.request("session.snapshot", { sessionId });
    return snapshot.messages
      .map((m) => m.message)
      .filter((m) => m.role === "toolResult" && m.toolName === "mark")
      .map((m: any) => ({ callId: m.toolCallId as string, isError: m.isError as boolean }));
  } finally {
    await tau.close();
  }
}

const refusals = (replicas: ServingCli[]) => replicas.map((r) => r.stderr().split(REFUSED_LOG).length - 1).reduce((x, y) => x + y, 0);

const rpcError = (answer: Promise<unknown>) =>
  answer.then(
    () => undefined,
    (error: unknown) => error as RpcError,
  );

describe("an approval shared by three replicas on Redis", () => {
  it(
    "created through A, approved on B and C in the same tick: one answer wins, the other gets the one-process error, the command runs once and Tau gets one result",
    async () => {
      const { set, onA, onB, onC, sessionId, marker } = await threeReplicas();
      const turnId = await approvalRequired(onA, [onA, onB, onC], sessionId, "act_1");

      const outcomes = await Promise.allSettled([
        onB.request("interaction/approve", { sessionId, interactionId: "act_1" }),
        onC.request("interaction/approve", { sessionId, interactionId: "act_1" }),
      ]);
      const accepted = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
      const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as RpcError] : []));
      expect(accepted).toEqual([{ approved: true, interactionId: "act_1" }]);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toBeInstanceOf(RpcError);
      // The error a second answer gets from one process (test/e2e/ask/ask-interactions.test.ts), here and on the owner alike.
      expect(refused[0]!.code).toBe(-32006);
      const later = await rpcError(onA.request("interaction/approve", { sessionId, interactionId: "act_1" }));
      expect({ code: refused[0]!.code, message: refused[0]!.message }).toEqual({ code: later!.code, message: later!.message });

      await waitForTerminal(onB, sessionId, turnId);
      for (const client of [onA, onB, onC]) {
        await waitForTerminal(client, sessionId, turnId);
        const events = client.eventsOf(sessionId);
        expectContiguous(events);
        expectOneTerminalPerTurn(events);
        expect(payloadsOf(events, "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
        expect(payloadsOf<{ name: string; isError: boolean }>(events, "tool.result").filter((r) => r.name === "mark")).toEqual([
          expect.objectContaining({ name: "mark", isError: false, output: expect.stringContaining("marked") }),
        ]);
      }
      expect(markRuns(marker)).toBe(1);
      const results = await tauToolResults(set.hostUrl, sessionId);
      expect(results).toEqual([{ callId: expect.any(String), isError: false }]);
      await until(async () => {
        const state = await answerStream(set);
        return state.length === 0 && state.unacknowledged === 0 ? state : undefined;
      }, "the answer stream to be empty", 60_000);
      expect(refusals(set.replicas)).toBe(0);
      expect(markRuns(marker)).toBe(1);
    },
    TEST_TIMEOUT,
  );

  it(
    "A stopped, the answer accepted on B, A killed: the next owner delivers it at most once, Tau refuses it (the call ended with A's connection), nothing is delivered again, and the session keeps working",
    async () => {
      const { set, a, b, c, onB, onC, sessionId, marker } = await threeReplicas();
      const turnId = await approvalRequired(onB, [onB, onC], sessionId, "act_1");

      a.child.kill("SIGSTOP");
      try {
        expect(await onB.request("interaction/approve", { sessionId, interactionId: "act_1" })).toEqual({ approved: true, interactionId: "act_1" });
      } finally {
        a.child.kill("SIGKILL");
      }
      await a.exit;
      const owner = await until(async () => {
        const [onBOwned, onCOwned] = [await leasesOwned(b), await leasesOwned(c)];
        return onBOwned + onCOwned === 1 ? (onBOwned === 1 ? b : c) : undefined;
      }, "B or C to take the host over", 60_000);

      // Tau cancelled the call with A's connection; the turn goes on without it.
      await waitForTerminal(onB, sessionId, turnId);
      // The answer A may have taken before it stopped is taken over once it has been idle long enough.
      await until(async () => {
        const state = await answerStream(set);
        return state.length === 0 && state.unacknowledged === 0 ? state : undefined;
      }, "the answer stream to be empty", 120_000).catch((error: unknown) => {
        throw new Error(`${String(error)}\nowner:\n${owner.stderr().slice(-4000)}`);
      });

      // A later turn through B completes, with the same sequence.
      const next = await onB.request("session/send", { sessionId, content: "after the failover" });
      await waitForTerminal(onB, sessionId, next.turnId);
      await waitForTerminal(onC, sessionId, next.turnId);

      // A never read on after it stopped: the next owner sent the answer once and Tau refused it (the
      // call ended with A's connection), so no command ran. Only if the lease moved while A was still
      // stopped, its connection open, could the answer have been taken and run instead — once either way.
      const [refused, ran] = [refusals([b, c]), markRuns(marker)];
      expect(refused + ran, `refused ${refused}, ran ${ran}`).toBe(1);
      // Tau holds one result for the call: its own cancellation, or the command's output.
      expect(await tauToolResults(set.hostUrl, sessionId)).toEqual([{ callId: expect.any(String), isError: ran === 0 }]);
      for (const client of [onB, onC]) {
        const events: Event[] = client.eventsOf(sessionId);
        expectContiguous(events);
        expectOneTerminalPerTurn(events);
        expect(payloadsOf(events, "approval.required").map((p) => p.id)).toEqual(["act_1"]);
      }
      expect(await answerStream(set)).toEqual({ length: 0, unacknowledged: 0 });
      expect(onB.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );
  it(
    "a client on B that answers reverse requests is asked about the approval A's host opened, and its answer decides it",
    async () => {
      const { file, marker } = markToolsFile(cleanups);
      const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tools-config", file] });
      const [a, b] = set.replicas as [ServingCli, ServingCli];
      expect([await leasesOwned(a), await leasesOwned(b)]).toEqual([1, 0]);
      const [onA, onB] = await Promise.all([a, b].map((replica) => set.client(replica)));
      await onA!.request("initialize", { client: { name: "approvals", version: "1" } });
      const asked: Array<{ method: string; params: Record<string, unknown> }> = [];
      onB!.reverse = (method, params) => {
        asked.push({ method, params });
        return { decision: "allow" };
      };
      await onB!.request("initialize", { client: { name: "approvals", version: "1" }, capabilities: ["reverseRequests"] });
      const { session } = await onA!.request("session/create", {});
      const sessionId = session.sessionId as string;
      for (const client of [onA!, onB!]) await client.request("session/subscribe", { sessionId });

      const { turnId } = await onA!.request("session/send", { sessionId, content: CALL_MARK });
      await waitForTerminal(onA!, sessionId, turnId);
      await waitForTerminal(onB!, sessionId, turnId);
      expect(asked).toEqual([
        { method: "interaction/requestPermission", params: expect.objectContaining({ requestId: "act_1", toolName: "mark", sessionId, interactionId: "act_1" }) },
      ]);
      // B's client decided it: approved once, the command ran once, Tau has its one result.
      expect(payloadsOf<{ id: string; status: string }>(onA!.eventsOf(sessionId), "approval.updated")).toEqual([expect.objectContaining({ id: "act_1", status: "approved" })]);
      expect(markRuns(marker)).toBe(1);
      expect(await tauToolResults(set.hostUrl, sessionId)).toEqual([expect.objectContaining({ isError: false })]);
    },
    TEST_TIMEOUT,
  );
});
