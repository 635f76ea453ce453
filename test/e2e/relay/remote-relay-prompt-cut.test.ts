import { describe, expect, it } from "vitest";
import { spawnAcpAgent, spawnTauHost } from "../../support/acp-process.js";
import { expectContiguous, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { agentText } from "../../support/codex-client.js";
import { askThroughRelay, codexThroughRelay } from "../../support/relayed-clients.js";
import { gatewayBehindProxy, type FaultyLink } from "../../support/relay-faults.js";

/**
 * A relay's connection cut between passing on a prompt and its answer: either the gateway had the
 * prompt and its answer was lost (the proxy drops what the gateway sends, then resets the
 * connection), or the prompt itself never arrived (the proxy drops what the relay sends). Either
 * way the relay learns on its new connection what became of it (the same idempotency key, or for
 * ACP the same turn id), so the prompt reaches Tau exactly once and the client gets one answer,
 * under its own id, from the turn that ran.
 */

const cleanups = cleanupsAfterEach();
const TIMEOUT = 90_000;

type Cut = "the gateway had it" | "it never arrived";
const CUTS: Cut[] = ["the gateway had it", "it never arrived"];

/** Blackholes one direction before the prompt is written, waits for the point the cut is meant to hit, then resets the connection. */
async function cutAround(link: FaultyLink, cut: Cut, sessionId: string, write: () => void): Promise<void> {
  const observer = await link.observe(sessionId);
  link.proxy.blackhole({ only: cut === "the gateway had it" ? "fromTarget" : "fromClient" });
  const dropped = link.proxy.dropped();
  write();
  // The gateway started the turn (its answer went nowhere), or the relay's bytes went nowhere.
  if (cut === "the gateway had it") await observer.waitForEvent(sessionId, "turn.started");
  else await dropped;
  link.proxy.heal();
  link.proxy.drop();
  if (cut === "it never arrived") expect(observer.eventsOf(sessionId).some((e) => e.type === "turn.started")).toBe(false);
}

const answersTo = (messages: unknown[], id: number) => (messages as Array<Record<string, unknown>>).filter((m) => m.id === id && !("method" in m));

describe("a relay's connection cut between a prompt and its answer", () => {
  for (const cut of CUTS) {
    it(
      `app-server --remote, ${cut}: turn/start is answered once with the turn that ran once, before the turn's notifications`,
      async () => {
        const link = await gatewayBehindProxy(cleanups);
        const { codex, relay } = await codexThroughRelay(link.remote, cleanups);
        const { thread } = await codex.request("thread/start", { cwd: link.cwd });
        let asked!: ReturnType<typeof codex.requestRaw>;
        await cutAround(link, cut, thread.id, () => (asked = codex.requestRaw("turn/start", { threadId: thread.id, input: [{ type: "text", text: "only once", text_elements: [] }] })));
        const id = 3; // initialize 1, thread/start 2
        const answer = await asked;
        expect(answer.error).toBeUndefined();
        const turnId = answer.result.turn.id as string;
        await codex.turnCompleted(turnId, 60_000);
        expect(link.proxy.connections).toBeGreaterThanOrEqual(2);
        expect(answersTo(codex.received, id)).toHaveLength(1);
        expect(agentText(codex.turnMessages(turnId))).toBe("You said: only once");
        expect(codex.turnMessages(turnId).filter((m) => m.method === "turn/started")).toHaveLength(1);
        // The client reads the answer before the turn it names (as the AI SDK provider needs).
        const answerAt = codex.received.indexOf(answer);
        expect(codex.received.findIndex((m) => m.method === "turn/started")).toBeGreaterThan(answerAt);
        expect(await link.userMessages(thread.id)).toEqual(["only once"]);
        expect(JSON.stringify(codex.received)).not.toContain("tauGateway");

        relay.end();
        expect(await relay.exit).toEqual({ code: 0, signal: null });
        expect(codex.invalid).toEqual([]);
      },
      TIMEOUT,
    );

    it(
      `stdio --remote, ${cut}: session/send is answered once with the turn that ran once, and the stream has it once`,
      async () => {
        const link = await gatewayBehindProxy(cleanups);
        const { terminal, relay } = askThroughRelay(link.remote, cleanups);
        await terminal.request("initialize", { client: { name: "ask-terminal", version: "1" } });
        const { session } = await terminal.request("session/create", {});
        const sessionId = session.sessionId as string;
        await terminal.request("session/subscribe", { sessionId });
        let sent!: Promise<{ accepted: boolean; status: string; turnId: string }>;
        await cutAround(link, cut, sessionId, () => (sent = terminal.request("session/send", { sessionId, content: "only once" })));
        const id = terminal.lastRequestId;
        const result = await sent;
        expect(result).toMatchObject({ accepted: true, status: "steered" });
        const ended = await waitForTerminal(terminal, sessionId, result.turnId);
        expect(ended).toMatchObject({ type: "turn.completed", payload: { response: "You said: only once" } });
        expect(link.proxy.connections).toBeGreaterThanOrEqual(2);
        expect(answersTo(terminal.received, id)).toHaveLength(1);
        expectContiguous(terminal.eventsOf(sessionId));
        expect(terminal.eventsOf(sessionId).filter((e) => e.type === "turn.started")).toHaveLength(1);
        expect(await link.userMessages(sessionId)).toEqual(["only once"]);
        expect(JSON.stringify(terminal.received)).not.toContain("tauGateway");

        relay.end();
        expect(await relay.exit).toEqual({ code: 0, signal: null });
        expect(terminal.invalid).toEqual([]);
      },
      TIMEOUT,
    );

    it(
      `acp --remote, ${cut}: session/prompt is answered once, end_turn, by the turn that ran once`,
      async () => {
        const link = await gatewayBehindProxy(cleanups);
        const agent = spawnAcpAgent(["--remote", link.remote], cleanups);
        agent.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
        await agent.next((m) => m.id === 1);
        agent.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: link.cwd, mcpServers: [] } });
        const { sessionId } = (await agent.next((m) => m.id === 2)).result as { sessionId: string };
        await cutAround(link, cut, sessionId, () =>
          agent.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "only once" }] } }),
        );
        expect(await agent.next((m) => m.id === 3, 60_000)).toEqual({ jsonrpc: "2.0", id: 3, result: expect.objectContaining({ stopReason: "end_turn" }) });
        expect(link.proxy.connections).toBeGreaterThanOrEqual(2);
        expect(await link.userMessages(sessionId)).toEqual(["only once"]);
        const chunks = (agent.sent() as any[]).filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk");
        expect(chunks.map((m) => m.params.update.content.text).join("")).toBe("You said: only once");

        agent.closeInput();
        expect(await agent.exit).toEqual({ code: 0, signal: null });
        expect(answersTo(agent.sent(), 3)).toHaveLength(1);
      },
      TIMEOUT,
    );
  }

  it(
    "acp --remote, the gateway had it, steering another client's turn: the text is steered in once and the prompt answered by that turn",
    async () => {
      const host = await spawnTauHost(["--stream-delay-ms", "15"], cleanups);
      const link = await gatewayBehindProxy(cleanups, ["--upstream", host.url]);
      const agent = spawnAcpAgent(["--remote", link.remote], cleanups);
      agent.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
      await agent.next((m) => m.id === 1);
      agent.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: link.cwd, mcpServers: [] } });
      const { sessionId } = (await agent.next((m) => m.id === 2)).result as { sessionId: string };
      // Another client's long turn runs: the editor's prompt steers into it.
      const other = await link.observe(sessionId);
      const long = Array.from({ length: 30 }, (_, i) => `part ${i} of the other turn`).join(" ");
      await other.request("session/send", { sessionId, content: long });
      await other.waitForEvent(sessionId, "model.streaming");

      link.proxy.blackhole({ only: "fromTarget" });
      agent.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "steered once" }] } });
      await other.waitFor(
        () => other.eventsOf(sessionId).some((e) => e.type === "queue.updated" && JSON.stringify(e.payload).includes("steered once")),
        "the steer in the session's queue",
      );
      link.proxy.heal();
      link.proxy.drop();

      expect(await agent.next((m) => m.id === 3, 60_000)).toEqual({ jsonrpc: "2.0", id: 3, result: expect.objectContaining({ stopReason: "end_turn" }) });
      expect(link.proxy.connections).toBeGreaterThanOrEqual(2);
      const told = (await link.userMessages(sessionId)).join("\n");
      expect(told.split("steered once")).toHaveLength(2);

      agent.closeInput();
      expect(await agent.exit).toEqual({ code: 0, signal: null });
      expect(answersTo(agent.sent(), 3)).toHaveLength(1);
    },
    TIMEOUT,
  );
});
