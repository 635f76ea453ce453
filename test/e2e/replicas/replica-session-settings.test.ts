import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { rpcError, RpcError } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, payloadsOf, terminalOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import type { ServingCli } from "../../support/cli.js";
import { CodexTestClient, completedItems } from "../../support/codex-client.js";
import { CALL_MARK, markRuns, markToolsFile } from "../../support/mark-tool.js";
import { leasesOwned, startReplicaSet, until, type ReplicaSet } from "../../support/replica-set.js";

/**
 * What gateway replicas on one Redis store share about a session besides its log and its pending
 * interactions, every part a real process: the approval mode a client sets on a replica that does
 * not own the Tau host is the one the owner decides by (and the one every replica reports), a
 * session-wide grant outlives the owner that carried it out, and a session closed on one replica
 * is closed on all of them, exactly as on one process.
 */

const cleanups = cleanupsAfterEach();
const TEST_TIMEOUT = 180_000;
/** Far below the interaction deadline (300 s by default): a turn that completes was not left waiting for an answer. */
const TURN_TIMEOUT = 45_000;
const CODEX_APPROVAL = "item/commandExecution/requestApproval";
const TERMINAL = new Set(["turn.completed", "turn.failed", "turn.aborted"]);

type AskClient = Awaited<ReturnType<ReplicaSet["client"]>>;

/** Two replicas offering `mark`, A first and holding the host's lease. */
async function twoReplicas(options: { leaseMs?: number } = {}) {
  const { file, marker } = markToolsFile(cleanups);
  const set = await startReplicaSet(cleanups, { replicas: 2, serveArgs: ["--tools-config", file], ...options });
  const [a, b] = set.replicas as [ServingCli, ServingCli];
  expect([await leasesOwned(a), await leasesOwned(b)]).toEqual([1, 0]);
  return { set, a, b, marker };
}

async function askClient(set: ReplicaSet, replica: ServingCli): Promise<AskClient> {
  const client = await set.client(replica);
  await client.request("initialize", { client: { name: "replica-settings", version: "1" } });
  return client;
}

async function codexClient(replica: ServingCli) {
  const client = await CodexTestClient.websocket(replica.baseUrl.replace("http://", "ws://"));
  cleanups.push(() => client.socket.terminate());
  await client.initialize();
  return client;
}

/** The approval mode a replica reports for a session, both ways an Ask client can read it. */
async function reportedMode(client: AskClient, sessionId: string) {
  const query = await client.request("interaction/requestPermission", { sessionId });
  const { workspace, settings } = await client.request("workspace/readState", { sessionId });
  return { query: query.mode as string, workspace: workspace.mode as string, permissions: settings.permissions.mode as string };
}

const sameMode = (mode: string) => ({ query: mode, workspace: mode, permissions: mode });

/** Resolves once `client` has the end of a turn in the session (the session's first turn, for a watcher that did not start it). */
const anyTurnEnded = (client: AskClient, sessionId: string) =>
  client.waitFor(() => client.eventsOf(sessionId).some((e) => TERMINAL.has(e.type)), `the end of a turn in ${sessionId}`, TURN_TIMEOUT);

/** The error one process gives for a session it does not know, with `sessionId` in place of the unknown id. */
async function unknownSessionError(client: AskClient, sessionId: string) {
  const unknown = "00000000-0000-4000-8000-00000000dead";
  const error = await rpcError(client.request("session/resume", { sessionId: unknown }));
  return { code: error.code, message: error.message.replace(unknown, sessionId) };
}

const errorOf = async (answer: Promise<unknown>) => {
  const error = await rpcError(answer);
  return { code: error.code, message: error.message };
};

/**
 * A Codex client on B (which does not own the host) starts a thread with one approval policy and a
 * turn calling `mark` with another; an Ask client on A watches the session. The client accepts
 * whatever it is asked: a turn that asks still completes, and the test says it asked.
 */
async function codexTurnWithPolicies(threadPolicy: string, turnPolicy: string) {
  const { set, a, b, marker } = await twoReplicas();
  const client = await codexClient(b);
  client.onRequest(CODEX_APPROVAL, () => ({ decision: "accept" }));
  const { thread } = await client.request("thread/start", { approvalPolicy: threadPolicy });
  const threadId = thread.id as string;
  const watcher = await askClient(set, a);
  await watcher.request("session/subscribe", { sessionId: threadId });

  const { turn } = await client.request("turn/start", {
    threadId,
    approvalPolicy: turnPolicy,
    input: [{ type: "text", text: CALL_MARK, text_elements: [] }],
  });
  const completed = await client.turnCompleted(turn.id, TURN_TIMEOUT);
  await anyTurnEnded(watcher, threadId);
  return { set, b, marker, client, watcher, threadId, turnId: turn.id as string, completed };
}

describe("an approval mode set on a replica that does not own the Tau host", () => {
  it(
    "Codex thread started on-request, turn started never on B: the owner runs the command without asking anyone, and A reports the mode as off",
    async () => {
      const { set, b, marker, client, watcher, threadId, turnId, completed } = await codexTurnWithPolicies("on-request", "never");
      expect(client.serverRequests(CODEX_APPROVAL)).toEqual([]);
      expect(payloadsOf(watcher.eventsOf(threadId), "approval.required")).toEqual([]);
      expect(completedItems(client.turnMessages(turnId), "commandExecution")).toEqual([
        expect.objectContaining({ status: "completed", exitCode: 0, aggregatedOutput: expect.stringContaining("marked") }),
      ]);
      expect(completed.params.turn.status).toBe("completed");
      expect(markRuns(marker)).toBe(1);
      // What the owner decides by is what every replica reports.
      expect(await reportedMode(watcher, threadId)).toEqual(sameMode("off"));
      expect(await reportedMode(await askClient(set, b), threadId)).toEqual(sameMode("off"));
      expect([...client.invalid, ...watcher.invalid]).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "Codex thread started never, turn started on-request on B: the client is asked once, accepting runs the command once, and A reports the mode as require",
    async () => {
      const { marker, client, watcher, threadId, turnId, completed } = await codexTurnWithPolicies("never", "on-request");
      const requests = client.serverRequests(CODEX_APPROVAL);
      expect(requests).toHaveLength(1);
      expect(requests[0]!.params).toMatchObject({ threadId, turnId });
      expect(payloadsOf(watcher.eventsOf(threadId), "approval.required")).toEqual([expect.objectContaining({ id: "act_1", toolName: "mark" })]);
      expect(payloadsOf(watcher.eventsOf(threadId), "approval.updated")).toEqual([{ id: "act_1", status: "approved" }]);
      expect(completed.params.turn.status).toBe("completed");
      expect(markRuns(marker)).toBe(1);
      expect(await reportedMode(watcher, threadId)).toEqual(sameMode("require"));
      expect([...client.invalid, ...watcher.invalid]).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "ACP session on B (on_request by default) switched to auto with session/set_mode: the prompt runs the command without session/request_permission, A reports the mode as auto, and an editor on A is told",
    async () => {
      const { set, a, b, marker } = await twoReplicas();
      const cwd = realpathSync(mkdtempSync(join(tmpdir(), "replica-settings-acp-")));
      cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
      const client = await RawAcpClient.connect(`${b.baseUrl.replace("http://", "ws://")}/acp`);
      cleanups.push(() => client.close());
      // Asked or not, the client allows once (the raw client's answer): a prompt that asks still ends.
      expect((await client.initialize()).error).toBeUndefined();
      const created = await client.request("session/new", { cwd, mcpServers: [] });
      const sessionId = created.result.sessionId as string;
      expect(created.result.modes.currentModeId).toBe("on_request");
      const watcher = await askClient(set, a);
      await watcher.request("session/subscribe", { sessionId });
      // An editor on A with the session loaded.
      const editorOnA = await RawAcpClient.connect(`${a.baseUrl.replace("http://", "ws://")}/acp`);
      cleanups.push(() => editorOnA.close());
      expect((await editorOnA.initialize()).error).toBeUndefined();
      expect((await editorOnA.request("session/load", { sessionId, cwd, mcpServers: [] })).result.modes.currentModeId).toBe("on_request");

      expect(await client.request("session/set_mode", { sessionId, modeId: "auto" })).toMatchObject({ result: {} });
      const modeUpdate = (m: any) => m.method === "session/update" && m.params.update.sessionUpdate === "current_mode_update";
      expect((await editorOnA.next(modeUpdate)).params).toEqual({ sessionId, update: { sessionUpdate: "current_mode_update", currentModeId: "auto" } });
      const prompted = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: CALL_MARK }] });
      await anyTurnEnded(watcher, sessionId);

      expect(client.received.filter((m) => m.method === "session/request_permission")).toEqual([]);
      expect(payloadsOf(watcher.eventsOf(sessionId), "approval.required")).toEqual([]);
      expect(prompted.result).toEqual({ stopReason: "end_turn" });
      expect(markRuns(marker)).toBe(1);
      expect(await reportedMode(watcher, sessionId)).toEqual(sameMode("auto"));
      expect(agentMessageProblems(client.received, client.sent)).toEqual([]);
      expect(editorOnA.received.filter(modeUpdate)).toHaveLength(1);
      expect(agentMessageProblems(editorOnA.received, editorOnA.sent)).toEqual([]);
      expect(watcher.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});

describe("a session-wide grant", () => {
  it(
    "approved with scope session on B, then A killed and B the owner: the next call of the tool runs without asking, the grant shown in the log as on one process",
    async () => {
      const { set, a, b, marker } = await twoReplicas({ leaseMs: 2_000 });
      const onB = await askClient(set, b);
      const { session } = await onB.request("session/create", {});
      const sessionId = session.sessionId as string;
      await onB.request("session/subscribe", { sessionId });

      const first = await onB.request("session/send", { sessionId, content: CALL_MARK });
      await onB.waitFor(() => payloadsOf(onB.eventsOf(sessionId), "approval.required").length === 1, "the first approval", TURN_TIMEOUT);
      expect(await onB.request("interaction/approve", { sessionId, interactionId: "act_1", scope: "session" })).toEqual({ approved: true, interactionId: "act_1" });
      await waitForTerminal(onB, sessionId, first.turnId);
      expect(payloadsOf(onB.eventsOf(sessionId), "approval.updated")).toEqual([{ id: "act_1", status: "approved", scope: "session" }]);
      expect(markRuns(marker)).toBe(1);

      a.child.kill("SIGKILL");
      await a.exit;
      await until(async () => ((await leasesOwned(b)) === 1 ? true : undefined), "B to take the host over", 60_000);
      // The new owner observes the session and says so with session.reset {cause:"resync"} (docs/deployment.md, "Replicas and a shared store").
      await onB.waitFor(() => payloadsOf(onB.eventsOf(sessionId), "session.reset").length > 0, "B's resync of the session", 60_000);

      const before = onB.eventsOf(sessionId).length;
      const second = await onB.request("session/send", { sessionId, content: CALL_MARK });
      // Ended, or stopped at an approval nobody answers (which would wait for the deadline).
      await onB.waitFor(
        () => terminalOf(onB.eventsOf(sessionId), second.turnId) !== undefined || onB.eventsOf(sessionId).slice(before).some((e) => e.type === "approval.required"),
        "the second turn to end or ask",
        TURN_TIMEOUT,
      );
      const later = onB.eventsOf(sessionId).slice(before);
      expect(payloadsOf(later, "approval.required")).toEqual([]);
      expect(terminalOf(later, second.turnId)).toMatchObject({ type: "turn.completed" });
      expect(payloadsOf(later, "approval.updated")).toEqual([{ id: "act_2", status: "approved", scope: "session" }]);
      expect(payloadsOf<{ name: string; isError: boolean }>(later, "tool.result").filter((r) => r.name === "mark")).toEqual([
        expect.objectContaining({ isError: false, output: expect.stringContaining("marked") }),
      ]);
      expect(markRuns(marker)).toBe(2);
      expectOneTerminalPerTurn(onB.eventsOf(sessionId));
      expect(onB.invalid).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});

describe("session/close on one replica", () => {
  it(
    "closed through B: A's subscriber ends with session.ended, and on A and on a third replica the session is gone as an unknown one is (Ask and Codex alike)",
    async () => {
      const { file } = markToolsFile(cleanups);
      const set = await startReplicaSet(cleanups, { replicas: 3, serveArgs: ["--tools-config", file] });
      const [a, b, c] = set.replicas as [ServingCli, ServingCli, ServingCli];
      const onA = await askClient(set, a);
      const { session } = await onA.request("session/create", {});
      const sessionId = session.sessionId as string;
      const { session: keptSession } = await onA.request("session/create", {});
      const kept = keptSession.sessionId as string;
      await onA.request("session/subscribe", { sessionId });
      const { turnId } = await onA.request("session/send", { sessionId, content: "before the close" });
      await waitForTerminal(onA, sessionId, turnId);

      const onB = await askClient(set, b);
      expect(await onB.request("session/close", { sessionId })).toEqual({ closed: true, sessionId });
      await onA.waitFor(() => onA.eventsOf(sessionId).some((e) => e.type === "session.ended"), "session.ended on A", TURN_TIMEOUT);

      const gone = await unknownSessionError(onA, sessionId);
      expect(gone.code).toBe(-32004);
      for (const [method, params] of [
        ["session/send", { sessionId, content: "after the close" }],
        ["session/subscribe", { sessionId }],
        ["interaction/list", { sessionId }],
        ["session/resume", { sessionId }],
        ["session/close", { sessionId }],
      ] as const) {
        expect(await errorOf(onA.request(method, params)), `${method} on A`).toEqual(gone);
      }
      const listed = (await onA.request("session/list", { limit: 1000 })).sessions.map((s: { sessionId: string }) => s.sessionId);
      expect(listed).toContain(kept);
      expect(listed).not.toContain(sessionId);

      // A replica that never had the session open, and a fresh connection to A.
      const onC = await askClient(set, c);
      expect(await errorOf(onC.request("session/subscribe", { sessionId })), "session/subscribe on C").toEqual(gone);
      const freshOnA = await askClient(set, a);
      expect(await errorOf(freshOnA.request("session/subscribe", { sessionId })), "session/subscribe on a new connection to A").toEqual(gone);

      // A Codex client on A: the thread is gone as an unknown one is.
      const codex = await codexClient(a);
      const unknownThread = "00000000-0000-4000-8000-00000000beef";
      const unknown = await rpcError(codex.request("thread/resume", { threadId: unknownThread }));
      const resumed = await rpcError(codex.request("thread/resume", { threadId: sessionId }));
      expect({ code: resumed.code, message: resumed.message }).toEqual({ code: -32600, message: unknown.message.replace(unknownThread, sessionId) });

      // Nothing came after session.ended, and it came once.
      const events: Event[] = onA.eventsOf(sessionId);
      expect(events.at(-1)).toMatchObject({ type: "session.ended", payload: { sessionId, reason: "closed" } });
      expect(payloadsOf(events, "session.ended")).toHaveLength(1);
      expectContiguous(events);
      expect([...onA.invalid, ...onB.invalid, ...onC.invalid, ...codex.invalid]).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "closed on A and on B in the same tick: one close succeeds, the other is -32004, and session.ended is in the log once",
    async () => {
      const { set, a, b } = await twoReplicas();
      const [onA, onB] = [await askClient(set, a), await askClient(set, b)];
      const { session } = await onA.request("session/create", {});
      const sessionId = session.sessionId as string;
      for (const client of [onA, onB]) await client.request("session/subscribe", { sessionId });
      const { turnId } = await onA.request("session/send", { sessionId, content: "before the close" });
      for (const client of [onA, onB]) await waitForTerminal(client, sessionId, turnId);

      const outcomes = await Promise.allSettled([onA.request("session/close", { sessionId }), onB.request("session/close", { sessionId })]);
      const closed = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
      const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as RpcError] : []));
      expect(closed).toEqual([{ closed: true, sessionId }]);
      expect(refused.map((e) => e.code)).toEqual([-32004]);
      expect(refused[0]).toBeInstanceOf(RpcError);

      for (const client of [onA, onB]) {
        await client.waitFor(() => client.eventsOf(sessionId).some((e) => e.type === "session.ended"), "session.ended", TURN_TIMEOUT);
      }
      // A second session.ended, had both closes gone through, would follow the first within moments.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      for (const client of [onA, onB]) {
        const events = client.eventsOf(sessionId);
        expect(payloadsOf(events, "session.ended")).toEqual([{ sessionId, reason: "closed" }]);
        expect(events.at(-1)!.type).toBe("session.ended");
        expectContiguous(events);
      }
      expect([...onA.invalid, ...onB.invalid]).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
