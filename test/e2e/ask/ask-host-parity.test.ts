import { basename } from "node:path";
import { expect, it } from "vitest";
import { rpcError, type AskTestClient } from "../../support/ask-client.js";
import { openSession, waitForTerminal } from "../../support/ask-events.js";
import { describeOverAskTransports } from "../../support/ask-transports.js";

/**
 * What the Ask host's own minitests (ask-app-server 0.4.8, test/server_test.rb) assert, ported in
 * our words — each block names the test it comes from — plus the small answers an Ask client
 * relies on: `params: null`, the host's error words, session/events paging, the status of a send
 * into a running turn, the ping count of closed sessions. Over stdio, WebSocket `/rpc` and the
 * Unix socket, as ask-terminal speaks (no "jsonrpc" member either way).
 */

/** Sends `message` as it is and resolves with the answer carrying its id. */
async function raw(client: AskTestClient, message: Record<string, unknown>): Promise<any> {
  client.send(message);
  const answer = () => client.received.find((m) => (m as { id?: unknown }).id === message.id && !("method" in (m as object)));
  await client.waitFor(() => answer() !== undefined, `the answer to ${JSON.stringify(message)}`);
  return answer();
}

describeOverAskTransports("the Ask host's own assertions", { jsonrpcMember: "omit" }, (transport) => {
  const connect = () => transport().client({ jsonrpc: false });

  it("test_session_abort, test_workspace_read_state, test_interaction_request_permission_query", async () => {
    const client = await connect();
    const { cwd } = transport();
    // test_session_abort: aborting a session that runs nothing answers aborted:true and names it.
    const { session } = await client.request("session/create", {});
    const sessionId: string = session.sessionId;
    expect(await client.request("session/abort", { sessionId })).toEqual({ aborted: true, sessionId });

    // test_workspace_read_state: the workspace, and the settings block with the current model and
    // the permissions mode; the mode is the canonical approval word.
    expect(await client.request("workspace/readState", {})).toEqual({
      workspace: { path: cwd, name: basename(cwd), gitBranch: null, mode: "require" },
      settings: { model: { current: { modelId: null, providerId: null } }, permissions: { mode: "require" } },
    });
    expect(await client.request("workspace/readState", { sessionId })).toEqual({
      workspace: { path: cwd, name: basename(cwd), gitBranch: null, mode: "require", sessionId, running: false },
      settings: { model: { current: { modelId: "scripted-1", providerId: "tau-gateway" } }, permissions: { mode: "require" } },
    });
    for (const [mode, word] of [["auto", "auto"], ["yolo", "off"], ["never", "off"], ["on_request", "require"], ["plan", "require"]] as const) {
      const other = (await client.request("session/create", { mode })).session.sessionId;
      const state = await client.request("workspace/readState", { sessionId: other });
      expect([state.workspace.mode, state.settings.permissions.mode], mode).toEqual([word, word]);
    }

    // test_interaction_request_permission_query: a client sending interaction/requestPermission gets
    // the mode and whether something is pending, not -32601.
    expect(await client.request("interaction/requestPermission", { requestId: "q1", toolName: "bash" })).toEqual({ mode: "require", pending: false });
    expect(await client.request("interaction/requestPermission", { sessionId })).toEqual({ mode: "require", pending: false });
    expect((await rpcError(client.request("interaction/requestPermission", { sessionId: "no-such-session" }))).code).toBe(-32004);
    expect(client.invalid).toEqual([]);
    expect(client.received.every((m) => !("jsonrpc" in (m as object)))).toBe(true);
  });

  it("params: null is no params; errors in the host's words", async () => {
    const client = await connect();
    expect(await raw(client, { id: "null-ping", method: "ping", params: null })).toMatchObject({ id: "null-ping", result: { status: "ok" } });
    expect(await raw(client, { id: "null-create", method: "session/create", params: null })).toMatchObject({ result: { session: { sessionId: expect.any(String) } } });
    expect(await raw(client, { id: "null-send", method: "session/send", params: null })).toMatchObject({
      error: { code: -32602, message: expect.stringMatching(/^method session\/send missing required field "(sessionId|content)"$/) },
    });
    const unknown = await rpcError(client.request("session/resume", { sessionId: "nope" }));
    expect([unknown.code, unknown.message]).toEqual([-32004, "-32004: Session nope not found"]);
    const sessionId = await openSession(client);
    const interaction = await rpcError(client.request("interaction/approve", { sessionId, interactionId: "act_9" }));
    expect([interaction.code, interaction.message]).toEqual([-32006, "-32006: Interaction act_9 not found"]);
    const plan = await rpcError(client.request("plan/approve", { sessionId }));
    expect([plan.code, plan.message]).toEqual([-32007, `-32007: No pending plan for session ${sessionId}`]);
    expect(client.invalid).toEqual([]);
    expect(client.received.every((m) => !("jsonrpc" in (m as object)))).toBe(true);
  });

  it("session/events: hasMore null without a limit, limit 0 is no limit, afterSeq -1 reads from the start", async () => {
    const client = await connect();
    const sessionId = await openSession(client);
    const { turnId } = await client.request("session/send", { sessionId, content: "page me" });
    await waitForTerminal(client, sessionId, turnId);
    const all = client.eventsOf(sessionId);
    expect(all.length).toBeGreaterThan(3);
    expect(await client.request("session/events", { sessionId })).toEqual({ sessionId, events: all, hasMore: null });
    expect(await client.request("session/events", { sessionId, limit: 0 })).toEqual({ sessionId, events: all, hasMore: false });
    expect(await client.request("session/events", { sessionId, afterSeq: -1, limit: 2 })).toEqual({ sessionId, events: all.slice(0, 2), hasMore: true });
    expect(await client.request("session/events", { sessionId, afterSeq: all.length - 2, limit: 2 })).toEqual({ sessionId, events: all.slice(-2), hasMore: false });
  });

  it("session/send into a running turn answers queued (the host's word); mode steer and queue keep steered and queued apart", async () => {
    const client = await connect();
    const sessionId = await openSession(client);
    const first = await client.request("session/send", { sessionId, content: "/sleep 1500\nfirst" });
    expect(first).toEqual({ accepted: true, status: "steered", turnId: expect.any(String) });
    await client.waitForEvent(sessionId, "turn.started");
    expect(await client.request("session/send", { sessionId, content: "default words" })).toEqual({ accepted: true, status: "queued", turnId: first.turnId });
    expect(await client.request("session/send", { sessionId, content: "steer words", mode: "steer" })).toEqual({ accepted: true, status: "steered", turnId: first.turnId });
    const queued = await client.request("session/send", { sessionId, content: "queue words", mode: "queue" });
    expect(queued).toEqual({ accepted: true, status: "queued", turnId: expect.any(String) });
    expect(queued.turnId).not.toBe(first.turnId);
    await waitForTerminal(client, sessionId, queued.turnId);
    expect(client.invalid).toEqual([]);
  });

  it("a closed session stops counting in ping and is gone for every method", async () => {
    const client = await connect();
    const { session } = await client.request("session/create", {});
    const sessionId: string = session.sessionId;
    const before = (await client.request("ping")).sessions as number;
    expect(await client.request("session/close", { sessionId })).toEqual({ closed: true, sessionId });
    expect((await client.request("ping")).sessions).toBe(before - 1);
    const gone = await rpcError(client.request("session/events", { sessionId }));
    expect([gone.code, gone.message]).toEqual([-32004, `-32004: Session ${sessionId} not found`]);
    expect((await client.request("session/list", { limit: 100 })).sessions.map((s: { sessionId: string }) => s.sessionId)).not.toContain(sessionId);
    expect(client.invalid).toEqual([]);
  });
});
