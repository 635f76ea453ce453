import * as acp from "@agentclientprotocol/sdk";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentMessageProblems } from "../../support/acp-official-schema.js";
import { spawnAcpAgent, spawnTauHost } from "../../support/acp-process.js";
import { expectContiguous, openSession, runTurn, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { freePort } from "../../support/free-port.js";
import { startLoopbackRedis } from "../../support/redis-server.js";
import { askThroughRelay, codexThroughRelay, readyServe } from "../../support/relayed-clients.js";
import { until } from "../../support/replica-set.js";

/**
 * The gateway behind three --remote relays is killed mid-turn and started again on the same port
 * (its Tau host and its Redis store live on): each relay reconnects and repeats its client's
 * handshake; the editor's prompt in flight rejoins its turn on the new gateway (answered when it
 * ends, run once), a Codex request the lost link carried is answered -32012 instead of hanging,
 * and each client carries on — the Ask subscription without a gap or a repeat, ACP with
 * session/load, Codex with no second initialize.
 */

const cleanups = cleanupsAfterEach();

describe("a gateway restarted under --remote relays", () => {
  it(
    "reconnects, the editor's prompt in flight rejoins its turn, and every client carries on",
    async () => {
      const cwd = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-remote-restart-")));
      cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
      const host = await spawnTauHost([], cleanups);
      const redis = await startLoopbackRedis(cleanups);
      const port = await freePort();
      const serveArgs = ["--port", String(port), "--upstream", host.url, "--store", redis.url, "--store-lease-ms", "1000", "--log-level", "warn", "--default-cwd", cwd];
      const startGateway = () => readyServe(serveArgs, cleanups);
      let gateway = await startGateway();
      const remote = `ws://127.0.0.1:${port}`;

      // An Ask terminal through `stdio --remote`, subscribed to a session it made.
      const { terminal, relay: askRelay } = askThroughRelay(remote, cleanups);
      const sessionId = await openSession(terminal);
      await runTurn(terminal, sessionId, "before the restart");

      // A Codex client through `app-server --remote`.
      const { codex, relay: codexRelay } = await codexThroughRelay(remote, cleanups);
      expect((await codex.request("thread/list", {})).data.map((t: { id: string }) => t.id)).toContain(sessionId);

      // An editor through `acp --remote`, with a prompt in flight when the gateway dies.
      const agent = spawnAcpAgent(["--remote", remote], cleanups);
      const app = acp.client({ name: "remote-restart" }).onNotification("session/update", async () => undefined);
      await app.connectWith(acp.ndJsonStream(agent.input, agent.output), async (ctx) => {
        await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        await ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
        const inFlight = ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "/sleep 3000\nthe slow answer" }] }).then(
          (answer) => answer,
          (error: unknown) => error,
        );
        await terminal.waitFor(() => terminal.eventsOf(sessionId).filter((e) => e.type === "turn.started").length === 2, "the editor's turn to start");
        const editorTurn = (terminal.eventsOf(sessionId).filter((e) => e.type === "turn.started").at(-1)!.payload as { turnId: string }).turnId;

        gateway.child.kill("SIGKILL");
        await gateway.exit;

        // A request made while the gateway is away waits for the new link (not longer than the hold bound).
        // "Away" as the Codex relay knows it: a request written before it saw the close was in flight
        // on the lost link, and is rightly answered -32012.
        await until(() => codexRelay.stderr().includes("the connection to the gateway was lost") || undefined, "the Codex relay to see the gateway gone");
        const whileAway = codex.request("thread/list", {});
        gateway = await startGateway();
        expect((await whileAway).data.map((t: { id: string }) => t.id)).toContain(sessionId);
        // The editor's prompt was not answered "retry": the relay sent it again with its turn's id, and it rejoined that turn (run once).
        expect(await inFlight).toMatchObject({ stopReason: "end_turn" });
        expect(terminal.eventsOf(sessionId).filter((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === editorTurn)).toHaveLength(1);

        // Ask: the subscription goes on by itself, from where it stopped.
        await waitForTerminal(terminal, sessionId, editorTurn);
        const after = await runTurn(terminal, sessionId, "after the restart");
        expect(after.terminal).toMatchObject({ type: "turn.completed", payload: { response: "You said: after the restart" } });
        expectContiguous(terminal.eventsOf(sessionId));
        expect(terminal.invalid).toEqual([]);

        // ACP: the relay repeated initialize, so session/load works on the new link, then prompts do.
        await until(
          () =>
            ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }).then(
              () => true,
              () => undefined,
            ),
          "session/load to work again",
        );
        const answer = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "carry on" }] });
        expect(answer.stopReason).toBe("end_turn");
        await terminal.waitFor(
          () => terminal.eventsOf(sessionId).some((e) => e.type === "turn.completed" && (e.payload as { response?: string }).response === "You said: carry on"),
          "the editor's new turn",
        );
      });

      // Codex: initialized on the new link without asking the client again.
      expect((await codex.request("thread/list", {})).data.map((t: { id: string }) => t.id)).toContain(sessionId);
      const resumed = await codex.request("thread/resume", { threadId: sessionId });
      expect(JSON.stringify(resumed.thread.turns)).toContain("You said: carry on");
      expect(codex.invalid).toEqual([]);

      agent.closeInput();
      askRelay.end();
      codexRelay.end();
      for (const exit of [agent.exit, askRelay.exit, codexRelay.exit]) expect(await exit).toEqual({ code: 0, signal: null });
      expect(agentMessageProblems(agent.sent(), agent.received())).toEqual([]);
      expectContiguous(terminal.eventsOf(sessionId));
    },
    180_000,
  );
});
