import { describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { spawnAcpAgent, spawnTauHost } from "../../support/acp-process.js";
import { AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { agentText, CodexTestClient } from "../../support/codex-client.js";
import { spawnLineChild } from "../../support/line-child.js";
import { gatewayBehindProxy, streamedText } from "../../support/relay-faults.js";

/**
 * A relay's connection cut in the middle of a streamed reply (a loopback TCP proxy resets it; the
 * gateway and its turn live on): the relay reconnects and resumes the stream where its client
 * was, so the client gets every character of the reply once, and the prompt in flight is answered
 * when its turn ends — run once, not retried.
 */

const cleanups = cleanupsAfterEach();
const TIMEOUT = 90_000;
/** About 250 deltas of 8 characters, streamed 15 ms apart by the test's host: a few seconds of reply. */
const LONG_REPLY = Array.from({ length: 50 }, (_, i) => `line ${String(i).padStart(2, "0")} of the reply`).join(" ");

/** A gateway on a Tau host of its own that streams slowly, behind a proxy. */
async function slowGatewayBehindProxy() {
  const host = await spawnTauHost(["--stream-delay-ms", "15"], cleanups);
  return gatewayBehindProxy(cleanups, ["--upstream", host.url]);
}

const chunksOf = (messages: unknown[], sessionId: string, kind: string) =>
  (messages as any[])
    .filter((m) => m.method === "session/update" && m.params.sessionId === sessionId && m.params.update.sessionUpdate === kind)
    .map((m) => m.params.update.content.text as string);

describe("a relay's connection cut mid-reply", () => {
  it(
    "acp --remote: the editor gets the whole reply once, and its prompt is answered end_turn by the turn that ran once",
    async () => {
      const link = await slowGatewayBehindProxy();
      const agent = spawnAcpAgent(["--remote", link.remote], cleanups);
      agent.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
      await agent.next((m) => m.id === 1);
      agent.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: link.cwd, mcpServers: [] } });
      const { sessionId } = (await agent.next((m) => m.id === 2)).result as { sessionId: string };
      const observer = await link.observe(sessionId);

      agent.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: LONG_REPLY }] } });
      await agent.next((m) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk");
      link.proxy.drop();
      // Cut while the reply streams.
      expect(observer.eventsOf(sessionId).some((e) => e.type === "turn.completed")).toBe(false);

      expect(await agent.next((m) => m.id === 3, 60_000)).toEqual({ jsonrpc: "2.0", id: 3, result: expect.objectContaining({ stopReason: "end_turn" }) });
      expect(link.proxy.connections).toBeGreaterThanOrEqual(2);
      const completed = await observer.waitForEvent(sessionId, "turn.completed");
      expect(chunksOf(agent.sent(), sessionId, "agent_message_chunk").join("")).toBe((completed.payload as { response: string }).response);
      expect((completed.payload as { response: string }).response).toBe(`You said: ${LONG_REPLY}`);
      // Run once; and the editor's own prompt is not echoed back to it.
      expect(observer.eventsOf(sessionId).filter((e) => e.type === "turn.started")).toHaveLength(1);
      expect(chunksOf(agent.sent(), sessionId, "user_message_chunk")).toEqual([]);
      // The relay's tags never reach the editor.
      expect(JSON.stringify(agent.sent())).not.toContain("tau-gateway/");

      agent.closeInput();
      expect(await agent.exit).toEqual({ code: 0, signal: null });
      expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "app-server --remote: the client gets every delta of the reply once, joining up to the completed item",
    async () => {
      const link = await slowGatewayBehindProxy();
      let codex!: CodexTestClient;
      const relay = spawnLineChild(["app-server", "--remote", link.remote], cleanups, (line) => codex.receive(line));
      codex = new CodexTestClient(relay.write);
      await codex.initialize();
      const { thread } = await codex.request("thread/start", { cwd: link.cwd });
      const observer = await link.observe(thread.id);
      const { turn } = await codex.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: LONG_REPLY, text_elements: [] }] });
      await codex.waitFor((m) => m.method === "item/agentMessage/delta");
      link.proxy.drop();
      expect(observer.eventsOf(thread.id).some((e) => e.type === "turn.completed")).toBe(false);

      await codex.turnCompleted(turn.id, 60_000);
      expect(link.proxy.connections).toBeGreaterThanOrEqual(2);
      const messages = codex.turnMessages(turn.id);
      const deltas = messages.filter((m) => m.method === "item/agentMessage/delta").map((m) => m.params.delta as string);
      expect(agentText(messages)).toBe(`You said: ${LONG_REPLY}`);
      expect(deltas.join("")).toBe(agentText(messages));
      expect(messages.filter((m) => m.method === "turn/started")).toHaveLength(1);
      expect(messages.filter((m) => m.method === "turn/completed")).toHaveLength(1);
      expect(JSON.stringify(codex.received)).not.toContain("tauGateway");

      relay.end();
      expect(await relay.exit).toEqual({ code: 0, signal: null });
      expect(codex.invalid).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "stdio --remote: the Ask terminal's event stream goes on from its cursor, every event once, every character once",
    async () => {
      const link = await slowGatewayBehindProxy();
      let terminal!: AskTestClient;
      const relay = spawnLineChild(["stdio", "--remote", link.remote], cleanups, (line) => terminal.receive(line));
      terminal = new AskTestClient(relay.write);
      await terminal.request("initialize", { client: { name: "ask-terminal", version: "1" } });
      const { session } = await terminal.request("session/create", {});
      const sessionId = session.sessionId as string;
      await terminal.request("session/subscribe", { sessionId });
      const observer = await link.observe(sessionId);
      const { turnId } = await terminal.request("session/send", { sessionId, content: LONG_REPLY });
      await terminal.waitForEvent(sessionId, "model.streaming");
      link.proxy.drop();
      expect(observer.eventsOf(sessionId).some((e) => e.type === "turn.completed")).toBe(false);

      const ended = await waitForTerminal(terminal, sessionId, turnId);
      expect(ended).toMatchObject({ type: "turn.completed", payload: { response: `You said: ${LONG_REPLY}` } });
      expect(link.proxy.connections).toBeGreaterThanOrEqual(2);
      expectContiguous(terminal.eventsOf(sessionId));
      expect(streamedText(terminal, sessionId)).toBe(`You said: ${LONG_REPLY}`);
      await waitForTerminal(observer, sessionId, turnId);
      expect(terminal.eventsOf(sessionId)).toEqual(observer.eventsOf(sessionId).slice(0, terminal.eventsOf(sessionId).length));

      relay.end();
      expect(await relay.exit).toEqual({ code: 0, signal: null });
      expect(terminal.invalid).toEqual([]);
    },
    TIMEOUT,
  );
});
