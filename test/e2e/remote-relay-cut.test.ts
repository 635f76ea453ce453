import { describe, expect, it } from "vitest";
import { agentMessageProblems } from "../support/acp-official-schema.js";
import { spawnAcpAgent, spawnTauHost } from "../support/acp-process.js";
import { cleanupsAfterEach } from "../support/cleanups.js";
import { gatewayBehindProxy } from "../support/relay-faults.js";

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
});
