import { describe, expect, it } from "vitest";
import type { CommandToolConfig } from "../../../src/bridge/interactions/index.js";
import type { CodexTestClient } from "../../support/codex-client.js";
import { codexSuite } from "../../support/codex-suite.js";

/**
 * A Codex thread's status tells a turn that another client runs — another Codex connection, or an
 * Ask client on the same session — as the real app-server tells every connection of a thread it
 * runs: `active` (with `waitingOnApproval` while the turn waits on one) in thread/list and
 * thread/read, and thread/status/changed to a connection that loaded the thread, back to `idle`
 * once the turn ends. The turn is held by an approval nobody answers until the test does.
 */

const echo: CommandToolConfig = { name: "echo-args", description: "Prints its JSON arguments.", parameters: { type: "object" }, command: "cat" };
const suite = codexSuite([echo]);

const listedStatus = async (c: CodexTestClient, threadId: string) => (await c.request("thread/list", { includedThreadIds: [threadId] })).data[0]?.status;
const readStatus = async (c: CodexTestClient, threadId: string) => (await c.request("thread/read", { threadId })).thread.status;
const waiting = { type: "active", activeFlags: ["waitingOnApproval"] };

/** The suite's clients are on WebSockets: this one's goes, as a closed terminal's does. */
const closeSocket = (c: CodexTestClient) => (c as CodexTestClient & { socket: { close(): void } }).socket.close();

/** Lists until the thread shows `status`: a connection that just closed leaves once the gateway has read its close. */
async function listsAs(c: CodexTestClient, threadId: string, status: unknown): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (JSON.stringify(await listedStatus(c, threadId)) === JSON.stringify(status)) return;
  }
  expect(await listedStatus(c, threadId)).toEqual(status);
}

describe("the status of a thread another client runs", () => {
  it("is active in thread/list and thread/read while another Codex connection's turn runs, idle after", async () => {
    const runner = await suite.client();
    const threadId = await suite.startedThread(runner, { approvalPolicy: "on-request" });
    const watcher = await suite.client();
    await watcher.initialize();
    expect(await listedStatus(watcher, threadId)).toEqual({ type: "idle" });

    let answer!: (decision: unknown) => void;
    const decided = new Promise((resolve) => (answer = resolve));
    runner.onRequest("item/commandExecution/requestApproval", () => decided);
    const { turn } = await runner.request("turn/start", { threadId, input: [{ type: "text", text: '/tool echo-args {"a":1}\nDone' }] });
    await runner.waitFor((m) => m.method === "item/commandExecution/requestApproval");
    expect(await listedStatus(watcher, threadId)).toEqual(waiting);
    expect(await readStatus(watcher, threadId)).toEqual(waiting);

    answer({ decision: "accept" });
    await runner.turnCompleted(turn.id);
    expect(await listedStatus(watcher, threadId)).toEqual({ type: "idle" });
    expect(await readStatus(watcher, threadId)).toEqual({ type: "idle" });
  });

  it("is active while an Ask client's turn runs on the session that no Codex connection has loaded, with thread/status/changed to one that loads it", async () => {
    const codex = await suite.client();
    const threadId = await suite.startedThread(codex, { approvalPolicy: "on-request" });
    // The connection that loaded the thread has gone: nobody here has it loaded any more.
    closeSocket(codex);
    const ask = await suite.gateway.client();
    await ask.request("session/subscribe", { sessionId: threadId });
    const lister = await suite.client();
    await lister.initialize();
    await listsAs(lister, threadId, { type: "notLoaded" });

    await ask.request("session/send", { sessionId: threadId, content: '/tool echo-args {"a":1}\nDone' });
    const required = await ask.waitForEvent(threadId, "approval.required");
    // No Codex connection has the thread loaded: the turn is still the thread's.
    expect(await listedStatus(lister, threadId)).toEqual(waiting);
    expect(await readStatus(lister, threadId)).toEqual(waiting);
    expect(await listedStatus(lister, threadId)).toEqual(waiting);

    // One that loads it now follows the turn's status from there.
    const watcher = await suite.client();
    await watcher.initialize();
    const from = watcher.received.length;
    expect((await watcher.request("thread/resume", { threadId, excludeTurns: true })).thread.status).toEqual(waiting);
    await ask.request("interaction/approve", { sessionId: threadId, interactionId: (required.payload as { id: string }).id });
    await ask.waitForEvent(threadId, "turn.completed");
    await watcher.waitFor((m) => m.method === "thread/status/changed" && m.params.status.type === "active" && m.params.status.activeFlags.length === 0, undefined, from);
    await watcher.waitFor((m) => m.method === "thread/status/changed" && m.params.status.type === "idle", undefined, from);
    expect(await listedStatus(lister, threadId)).toEqual({ type: "idle" });
    closeSocket(watcher);
    // Nobody has it loaded again, and nothing runs: as the app-server lists a thread no client loaded.
    await listsAs(lister, threadId, { type: "notLoaded" });
  });
});
