import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { spawnTauHost } from "../../support/acp-process.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { expectContiguous, openSession, payloadsOf, runTurn } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { freePort } from "../../support/free-port.js";
import { askThroughRelay, codexThroughRelay, editorThroughRelay, readyServe } from "../../support/relayed-clients.js";
import { until } from "../../support/replica-set.js";

/**
 * A gateway behind three --remote relays restarts and forgets every connection's sessions; on the
 * memory store (the default) it also begins every session's log again at seq 1. With a Tau host of
 * its own the sessions live on: each relay puts its client back on the sessions it followed, in its
 * dialect's words, so that what happens in them afterwards reaches it (the Ask terminal told that
 * the log began again). With the embedded host the sessions went with the gateway: each client's
 * next request about them gets its dialect's not-found answer.
 */

const cleanups = cleanupsAfterEach();

describe("a gateway restarted under --remote relays, its sessions and logs forgotten", () => {
  it(
    "puts every relayed client back on its session: later turns reach the Ask terminal, the Codex client and the editor",
    async () => {
      const cwd = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-remote-memory-")));
      cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
      const host = await spawnTauHost([], cleanups);
      const port = await freePort();
      const serveArgs = ["--port", String(port), "--upstream", host.url, "--store", "memory", "--log-level", "warn", "--default-cwd", cwd];
      const startGateway = () => readyServe(serveArgs, cleanups);
      let gateway = await startGateway();
      const remote = `ws://127.0.0.1:${port}`;

      // An Ask terminal through `stdio --remote`, subscribed to a session it made, with a few turns behind it.
      const { terminal, relay: askRelay } = askThroughRelay(remote, cleanups);
      const sessionId = await openSession(terminal);
      for (const n of [1, 2, 3]) await runTurn(terminal, sessionId, `before the restart ${n}`);
      const seqBefore = terminal.eventsOf(sessionId).at(-1)!.seq;

      // A Codex client through `app-server --remote`, following the session as a thread.
      const { codex, relay: codexRelay } = await codexThroughRelay(remote, cleanups);
      await codex.request("thread/resume", { threadId: sessionId });

      // An editor through `acp --remote`, with the session loaded.
      const editor = await editorThroughRelay(remote, sessionId, cwd, cleanups);

      gateway.child.kill("SIGKILL");
      await gateway.exit;
      gateway = await startGateway();
      // Each relay is on the new gateway once a request through it is answered (lines wait for the new link).
      await until(() => terminal.request("session/list", {}).then(() => true), "the Ask relay to reconnect");
      await until(() => codex.request("thread/list", {}).then(() => true), "the Codex relay to reconnect");
      let listId = 100;
      await until(async () => {
        const id = ++listId;
        editor.write({ jsonrpc: "2.0", id, method: "session/list", params: {} });
        return "result" in (await editor.next((m) => m.id === id)) || undefined;
      }, "the editor's relay to reconnect");

      // A phone on the restarted gateway prompts the session.
      const phone = await AskTestClient.websocket(`${remote}/rpc`);
      cleanups.push(() => phone.socket.terminate());
      await phone.request("initialize", { client: { name: "phone", version: "1" } });
      await phone.request("session/subscribe", { sessionId });
      const after = await runTurn(phone, sessionId, "after the restart");
      expect(after.terminal).toMatchObject({ type: "turn.completed", payload: { response: "You said: after the restart" } });

      // The Codex client follows the thread again, and can start turns in it.
      await codex.waitFor((m) => m.method === "turn/completed" && m.params.turn.id === after.sent.turnId, 20_000);
      const codexTurn = await codex.turn(sessionId, "from Codex after the restart");
      expect(codexTurn.completed.params.turn.status).toBe("completed");
      expect(codex.invalid).toEqual([]);

      // The editor follows the session again, and can prompt it.
      await editor.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk" && m.params.update.content.text.includes("after the restart"));
      editor.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "from the editor after the restart" }] } });
      expect(await editor.next((m) => m.id === 3, 30_000)).toMatchObject({ result: { stopReason: "end_turn" } });

      // The Ask terminal goes on from its cursor, every later turn reaching it and no seq twice, in
      // one of two ways. The restarted gateway retells the session's earlier turns from Tau's
      // history; where that new log differs from the old one at the terminal's cursor (the relay
      // compares the event there), the terminal is told the log began again — a session.reset
      // numbered after what it had — and is given the new log from its start. Where the new log
      // tells the same event there (a turn's text streamed in the same pieces), it is the same log,
      // and the terminal simply goes on.
      const editorTurnDone = (client: AskTestClient) => () =>
        client.eventsOf(sessionId).some((e) => e.type === "turn.completed" && (e.payload as { response?: string }).response === "You said: from the editor after the restart");
      await terminal.waitFor(editorTurnDone(terminal), "the editor's turn on the terminal");
      // The phone's copy of the new log is compared with the terminal's: it must have got as far.
      await phone.waitFor(editorTurnDone(phone), "the editor's turn on the phone");
      const events = terminal.eventsOf(sessionId);
      expectContiguous(events);
      const afterRestart = events.filter((e) => e.seq > seqBefore);
      const reset = afterRestart[0]?.type === "session.reset";
      if (reset) expect(afterRestart[0]).toEqual({ seq: seqBefore + 1, type: "session.reset", payload: { cause: "resync" } });
      const told = reset ? afterRestart.slice(1) : afterRestart;
      const newLog = phone.eventsOf(sessionId).filter((e) => reset || e.seq > seqBefore);
      expect(told.map((e) => e.type)).toEqual(newLog.map((e) => e.type));
      // (The new log may retell earlier turns from Tau's history; the ones after the restart are these, once each.)
      expect(payloadsOf<{ response: string }>(afterRestart, "turn.completed").map((p) => p.response).filter((r) => r.includes("after the restart"))).toEqual([
        "You said: after the restart",
        "You said: from Codex after the restart",
        "You said: from the editor after the restart",
      ]);
      expect(terminal.invalid).toEqual([]);

      // The terminal's own requests speak its numbering: session/events reads the new log, renumbered
      // (the reset was the relay's word to it, and is in no log).
      const read = await terminal.request("session/events", { sessionId, afterSeq: seqBefore });
      expect(read.events).toEqual(told);
      const runAgain = await runTurn(terminal, sessionId, "from the terminal after the restart");
      expect(runAgain.terminal.seq).toBe(terminal.eventsOf(sessionId).at(-1)!.seq);
      expectContiguous(terminal.eventsOf(sessionId));

      editor.closeInput();
      askRelay.end();
      codexRelay.end();
      for (const exit of [editor.exit, askRelay.exit, codexRelay.exit]) expect(await exit).toEqual({ code: 0, signal: null });
      expect(agentMessageProblems(editor.sent(), editor.received())).toEqual([]);
    },
    180_000,
  );

  it(
    "lets go of sessions that went with the gateway's embedded host: each client's next request meets its dialect's not-found answer",
    async () => {
      const cwd = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-remote-gone-")));
      cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
      const port = await freePort();
      const startGateway = () => readyServe(["--port", String(port), "--log-level", "warn", "--default-cwd", cwd], cleanups);
      let gateway = await startGateway();
      const remote = `ws://127.0.0.1:${port}`;

      const { terminal, relay: askRelay } = askThroughRelay(remote, cleanups);
      const sessionId = await openSession(terminal);
      await runTurn(terminal, sessionId, "before the restart");
      const { codex, relay: codexRelay } = await codexThroughRelay(remote, cleanups);
      await codex.request("thread/resume", { threadId: sessionId });
      const editor = await editorThroughRelay(remote, sessionId, cwd, cleanups);

      // The embedded host ends with its gateway: the session is gone for good.
      gateway.child.kill("SIGKILL");
      await gateway.exit;
      gateway = await startGateway();

      expect(await rpcError(terminal.request("session/send", { sessionId, content: "anyone there?" }))).toMatchObject({ code: -32004 });
      const codexAnswer = await codex.requestRaw("turn/start", { threadId: sessionId, input: [{ type: "text", text: "anyone there?" }] });
      expect(codexAnswer.error).toMatchObject({ message: expect.stringContaining("not found") });
      editor.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "anyone there?" }] } });
      expect(await editor.next((m) => m.id === 3, 30_000)).toMatchObject({ error: { code: -32002 } });

      // Each relay still serves its client: a new session works end to end.
      const fresh = await openSession(terminal);
      expect((await runTurn(terminal, fresh, "a new start")).terminal).toMatchObject({ type: "turn.completed" });
      expect(terminal.invalid).toEqual([]);
      expect(codex.invalid).toEqual([]);
    },
    120_000,
  );
});
